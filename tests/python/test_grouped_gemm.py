"""cuforge.op.GroupedGemm on the CPU: construction as the seed's, the kernel choice, and every bad
input of both forms refused by name before anything runs (fake device arrays: nothing is
dereferenced; a run that passes its checks stops at the device check)."""

from __future__ import annotations

import numpy as np
import pytest

import cuforge
import cuforge as cutlass
from fake_arrays import FakeDeviceArray, no_gpu

RowMajor = cuforge.LayoutType.RowMajor
GIB = 1 << 30


def group(g, m, n, k, dtype=np.float16):
    """A (m x k), B (k x n), C and D (m x n) of group g, at addresses of their own."""
    base = 0x10_0000_0000 + g * 4 * GIB
    return (FakeDeviceArray((m, k), dtype, ptr=base), FakeDeviceArray((k, n), dtype, ptr=base + GIB),
            FakeDeviceArray((m, n), dtype, ptr=base + 2 * GIB), FakeDeviceArray((m, n), dtype, ptr=base + 3 * GIB))


def lists(shapes, dtype=np.float16):
    groups = [group(g, *s, dtype=dtype) for g, s in enumerate(shapes)]
    return [list(x) for x in zip(*groups)]


def test_the_seed_constructor_and_names():
    plan = cutlass.op.GroupedGemm(element=np.float16, layout=cutlass.LayoutType.RowMajor,
                                  element_accumulator=np.float32)
    assert plan.element_A == cuforge.DataType.f16 and plan.layout_B == RowMajor
    assert plan.select(8, 1024, 4096, 4096).startswith("cuforge_sm90_grouped_")
    assert plan.tile_descriptions()
    plan.activation = cutlass.epilogue.relu
    assert plan.select(8, 1024, 4096, 4096).endswith("_relu")
    sm80 = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor, kernel_cc=80)
    assert sm80.select(64, 128, 2048, 2048).startswith("cuforge_sm80_grouped_")
    assert cuforge.list_gemms(90, kind=cuforge.KernelKind.Grouped)
    assert all("_grouped_" in n for n in cuforge.list_gemms(kind=cuforge.KernelKind.Grouped))
    with pytest.raises(cuforge.InvalidArgumentError, match="grouped GEMM"):
        cuforge.op.GroupedGemm(element=np.float32, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="do not split K"):
        plan.split_k_slices = 4


@pytest.mark.parametrize("m, n", [(0, 32), (32, 0)])
def test_groups_without_outputs_need_no_kernel(m, n):
    """Such groups' runs launch nothing, so choosing a kernel for them is refused, as for a GEMM."""
    plan = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor, element_accumulator=np.float32)
    for ask in (lambda: plan.select(4, m, n, 64), lambda: plan.construct(groups=4, M=m, N=n, K=64)):
        with pytest.raises(cuforge.InvalidArgumentError, match=r"^4 groups without rows or columns \(M or N of 0\)"):
            ask()
    assert plan.select(4, 1, 1, 64)


def test_types_come_from_the_first_group_when_not_given():
    As, Bs, Cs, Ds = lists([(64, 32, 16), (8, 32, 24)])
    plan = cuforge.op.GroupedGemm(A=As, B=Bs, C=Cs, D=Ds)
    assert plan.element_A == cuforge.DataType.f16
    # C's type is its first given group's (group 0 has none), else D's: both said "element_C: give element=".
    assert cuforge.op.GroupedGemm(A=As, B=Bs, C=[None, None], D=Ds).element_C == cuforge.DataType.f16
    f32 = lists([(64, 32, 16), (8, 32, 24)], np.float32)[2]
    with pytest.raises(cuforge.InvalidArgumentError, match="C f32 / D f16"):  # group 1's f32, no kernel takes it
        cuforge.op.GroupedGemm(A=As, B=Bs, C=[None, f32[1]], D=Ds)


@no_gpu
def test_a_valid_run_stops_at_the_device():
    plan = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor)
    As, Bs, Cs, Ds = lists([(64, 32, 16), (8, 32, 24), (0, 32, 8), (16, 32, 0)])
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(As, Bs, Cs, Ds, beta=1.0)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(As, Bs, None, Ds)
    biases = [FakeDeviceArray((32,), np.float16, ptr=0x20_0000_0000 + g * GIB) for g in range(4)]
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):  # a bias row per group
        plan.run(As, Bs, biases, Ds, beta=1.0)


@no_gpu
def test_a_group_without_c():
    """C None in one group (device or host arrays): refused by name where beta reads it, else run."""
    plan = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor)
    As, Bs, Cs, Ds = lists([(64, 32, 16), (8, 32, 24)])
    host = [[np.ones(shape, np.float16) for _ in range(2)] for shape in ((64, 16), (16, 32), (64, 32), (64, 32))]
    for A, B, C, D in ((As, Bs, [None, Cs[1]], Ds), (host[0], host[1], [None, host[2][1]], host[3])):
        with pytest.raises(cuforge.InvalidArgumentError, match="^group 0: C: beta is 1 but no C was given"):
            plan.run(A, B, C, D, beta=1.0)
        with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
            plan.run(A, B, C, D, beta=0.0)


@pytest.mark.parametrize("change, says", [
    (lambda L: L[1].pop(), r"^B: 2 tensors where A, C and D hold 3: one tensor per group in each list \(A 3, B 2, "),
    (lambda L: L[3].pop(), r"^D: 2 tensors where A, B and C hold 3"),
    (lambda L: L[1].__setitem__(1, group(1, 8, 32, 16)[1]), "^group 1: B: expected 24 rows"),
    (lambda L: L[0].__setitem__(2, group(2, 16, 32, 8, np.float32)[0]), "^group 2: A: expected element type f16"),
    (lambda L: L[3].__setitem__(0, FakeDeviceArray((64, 32), np.float16, ptr=0x10_0000_0000 + 3 * GIB, device=1)),
     "^group 0: D: expected a tensor on cuda:0"),
    (lambda L: L[2].__setitem__(0, FakeDeviceArray((32,), np.float16, ptr=0x10_0000_0000 + 2 * GIB)),
     r"^group 1: C: expected a bias row like group 0's, got \(8, 32\)"),
    (lambda L: L[0].__setitem__(0, FakeDeviceArray((1, 64, 16), np.float16, ptr=0x10_0000_0000)),
     "^group 0: expected matrices"),
])
def test_bad_lists_are_refused_naming_the_group(change, says):
    plan = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor)
    L = lists([(64, 32, 16), (8, 32, 24), (16, 32, 8)])
    change(L)
    with pytest.raises(cuforge.Error, match=says):
        plan.run(*L, beta=1.0)


def test_lists_of_the_wrong_kind():
    plan = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor)
    As, Bs, Cs, Ds = lists([(64, 32, 16)])
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: expected a list of one tensor per group, got an empty"):
        plan.run([], Bs, Cs, Ds)
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: expected a list of one tensor per group, got Fake"):
        plan.run(As[0], Bs, Cs, Ds)


def moe(groups=8, total=1000, n=512, k=256, offsets_dtype=np.int32, offsets_device=0):
    A = FakeDeviceArray((total, k), np.float16, ptr=0x20_0000_0000)
    B = FakeDeviceArray((groups, k, n), np.float16, ptr=0x21_0000_0000)
    D = FakeDeviceArray((total, n), np.float16, ptr=0x22_0000_0000)
    offs = FakeDeviceArray((groups,), offsets_dtype, ptr=0x23_0000_0000, device=offsets_device)
    return A, B, D, offs


@no_gpu
def test_the_offsets_form_runs_on_device_offsets():
    plan = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor)
    A, B, D, offs = moe()
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(A, B, None, D, offsets=offs)
    with pytest.raises(cuforge.DataTypeError, match="^offsets: expected int32"):
        plan.run(A, B, None, D, offsets=moe(offsets_dtype=np.float32)[3])
    with pytest.raises(cuforge.DataTypeError, match="^offsets: expected int32 .*, got int64$"):
        plan.run(A, B, None, D, offsets=moe(offsets_dtype=np.int64)[3])
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: no output tensor was given$"):
        plan.run(A, B, None, None, offsets=offs)
    with pytest.raises(cuforge.InvalidArgumentError, match="^offsets: expected a tensor on cuda:0"):
        plan.run(A, B, None, D, offsets=moe(offsets_device=1)[3])
    with pytest.raises(cuforge.InvalidArgumentError, match="^offsets: the offsets form runs on GPU tensors"):
        plan.run(A, B, None, D, offsets=np.zeros(8, np.int32))
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^offsets: expected an int32 tensor on the GPU \(PyTorch or "
                                                           r"CuPy: the group sizes stay on the device\), got a list$"):
        plan.run(A, B, None, D, offsets=[125 * g for g in range(1, 9)])
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^B: expected one matrix per group, a tensor of shape \(8"):
        plan.run(A, moe(groups=4)[1], None, D, offsets=offs)


def test_compile_builds_the_class_of_the_plans_own_lists(tmp_path):
    """Ragged lists are a ragged class of their mean M rounded up, as a run of them is (compile() took the
    floor of the mean, not ragged: another kernel than the run's for these). A fake toolkit builds at once."""
    from test_faults import fake_toolkit, run_python

    r = run_python("""
        import numpy as np, cuforge
        f16 = np.float16
        for ms in ([1000, 24, 300, 5000], [129, 128]):
            plan = cuforge.op.GroupedGemm(A=[np.ones((m, 512), f16) for m in ms],
                                          B=[np.ones((512, 1024), f16)] * len(ms),
                                          D=[np.zeros((m, 1024), f16) for m in ms], element_accumulator=np.float32)
            # Both chosen before compile(): after it, select() answers with the kernel compile() built.
            run_class = plan.select(len(ms), -(-sum(ms) // len(ms)), 1024, 512, ragged=True)
            floor_class = plan.select(len(ms), sum(ms) // len(ms), 1024, 512)
            print(plan.compile().name == run_class, floor_class == run_class)
        # The offsets form (one A of every group's rows, B of groups x K x N) is ragged (compile() refused it:
        # "A: expected a list of one tensor per group").
        plan = cuforge.op.GroupedGemm(A=np.ones((6324, 512), f16), B=np.ones((4, 512, 1024), f16),
                                      D=np.zeros((6324, 1024), f16), element_accumulator=np.float32)
        ragged, even = plan.select(4, 1581, 1024, 512, ragged=True), plan.select(4, 1581, 1024, 512)
        print(ragged != even, plan.compile(alignment_A=8).name == ragged, plan.compile().name == ragged)
        # and a C of one row (as the core reads it: a bias row under more than one row of A)
        plan.C = np.ones((1, 1024), f16)
        print(plan.compile().name == plan.select(4, 1581, 1024, 512, ragged=True, bias=True))
    """, CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False", "True", "False"] + ["True"] * 4, r.stdout
