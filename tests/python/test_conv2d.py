"""cuforge.op.Conv2d on the CPU: the seed's constructors and run signatures, the kernel choice, and
every bad input refused by name before anything runs (fake device arrays and NumPy arrays: nothing
is dereferenced; a run that passes its checks stops at the device check)."""

from __future__ import annotations

import inspect
import logging

import numpy as np
import pytest

import cuforge
import cuforge as cutlass
from fake_arrays import FakeDeviceArray, no_gpu

GIB = 1 << 30


def nhwc(shape, slot, dtype=np.float16):
    return FakeDeviceArray(shape, dtype, ptr=0x10_0000_0000 + slot * GIB)


def fprop_operands(n=2, h=9, w=7, c=16, k=32, r=3, s=3, p=None, q=None, dtype=np.float16):
    """x, filters and y of a convolution with padding 1 (P = H, Q = W for 3 x 3 filters)."""
    p = h if p is None else p
    q = w if q is None else q
    return nhwc((n, h, w, c), 0, dtype), nhwc((k, r, s, c), 1, dtype), nhwc((n, p, q, k), 2, dtype)


def test_the_seed_constructors():
    plan = cutlass.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32)
    assert plan.conv_kind == "fprop"
    assert plan.layout_A == cutlass.LayoutType.TensorNHWC
    assert plan.kernel_cc == 90, "16-bit convolutions run SM90 implicit GEMMs on Hopper (the target without a GPU)"
    assert plan.select(32, 56, 56, 64, 64, 3, 3, padding=1).startswith("cuforge_sm90_fprop_")
    assert cuforge.op.Conv2dDgrad(element=np.float16).select(32, 56, 56, 64, 64, 3, 3, stride=2, padding=1).startswith(
        "cuforge_sm80_dgrad_"), "SM90's implicit GEMM has no strided dgrad"
    sm80 = cutlass.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32, kernel_cc=80)
    assert sm80.kernel_cc == 80
    assert sm80.select(32, 56, 56, 64, 64, 3, 3, padding=1).startswith("cuforge_sm80_fprop_")
    assert plan.tile_descriptions()
    plan.activation = cutlass.epilogue.relu
    assert plan.select(32, 56, 56, 64, 64, 3, 3, padding=1, bias=True).endswith("_relu_bias")
    assert cuforge.op.Conv2dDgrad(element=np.float16).conv_kind == "dgrad"
    wgrad = cuforge.op.Conv2dWgrad(element=np.float16).select(32, 56, 56, 64, 64, 3, 3)
    assert wgrad.startswith("cuforge_sm90_wgrad_") and wgrad.endswith("_splitk"), "K = N·P·Q over 9 tiles: in slices"
    assert cuforge.op.Conv2dWgrad(element=np.float16).select(32, 14, 14, 256, 256, 3, 3, padding=1).startswith(
        "cuforge_sm90_wgrad_"), "K = 6272 over 36 tiles of 128 x 64: whole"
    assert cuforge.op.Conv2d(kind=cuforge.KernelKind.Conv2dDgrad, element=np.float16).conv_kind == "dgrad"
    assert all("_fprop_" in n for n in cuforge.list_gemms(kind=cuforge.KernelKind.Conv2dFprop))
    x, w, y = fprop_operands(dtype=np.float32)
    assert cuforge.op.Conv2dFprop(input=x, weight=w, output=y).element_A == cuforge.DataType.f32
    for named in (cuforge.op.Conv2dFprop, cuforge.op.Conv2dDgrad, cuforge.op.Conv2dWgrad):  # as Conv2d, a device
        with pytest.raises(cuforge.InvalidArgumentError, match="^device: expected 0 or more, got -1$"):
            named(element=np.float16, device=-1)


@pytest.mark.parametrize("build, says", [
    (lambda: cuforge.op.Conv2d(kind="xgrad", element=np.float16), "^kind: expected 'fprop', 'dgrad' or 'wgrad'"),
    (lambda: cuforge.op.Conv2d(element=np.int8), "no sm80 Conv2d fprop kernel"),
    (lambda: cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.TensorNHWC), "TensorNHWC is the layout"),
])
def test_plans_that_cannot_be_built(build, says):
    with pytest.raises(cuforge.Error, match=says):
        build()


def test_split_k_is_serial_or_parallel():
    plan = cuforge.op.Conv2d(kind="wgrad", element=np.float16)
    plan.split_k_slices = 4
    assert plan.split_k_slices == 4
    with pytest.raises(cuforge.InvalidArgumentError, match="convolution kernels split K serially .*, in parallel"):
        plan.decomposition = cuforge.Decomposition.StreamK
    plan.decomposition = cuforge.Decomposition.ParallelSplitK
    assert "_splitk" in plan.select(2, 9, 7, 16, 32, 3, 3, padding=1)
    fprop = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    fprop.split_k_slices = 2
    fprop.decomposition = cuforge.Decomposition.ParallelSplitK
    assert "_splitk" in fprop.select(2, 9, 7, 16, 32, 3, 3, padding=1)
    # dgrad splits (in parallel or serially) at unit stride only; the partial products need whole
    # 16-byte vectors of the output's channels.
    dgrad = cuforge.op.Conv2d(kind="dgrad", element=np.float16)
    dy, w, dx = nhwc((2, 5, 4, 32), 0), nhwc((32, 3, 3, 16), 1), nhwc((2, 9, 7, 16), 2)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^split_k_slices: strided dgrad \(stride \(2, 2\)\)"):
        dgrad.run(dy, w, None, dx, stride=2, padding=1, split_k=("parallel", 2))
    with pytest.raises(cuforge.InvalidArgumentError, match="the output's channels must be a multiple of 4"):
        fprop.select(2, 9, 7, 16, 6, 3, 3, padding=1)
    with pytest.raises(cuforge.InvalidArgumentError, match="^split_k: the mode is 'serial' or 'parallel'"):
        plan.run(dy, dx, None, w, stride=2, padding=1, split_k=("stream", 2))


@no_gpu
def test_valid_runs_stop_at_the_device():
    x, w, y = fprop_operands()
    for kind, operands in (("fprop", (x, w, y)), ("dgrad", (y, w, x)), ("wgrad", (y, x, w))):
        plan = cuforge.op.Conv2d(kind=kind, element=np.float16)
        a, b, d = operands
        with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
            plan.run(a, b, None, d, padding=(1, 1))
    # The seed's names; by position the geometry before alpha and beta, as the interface's notebook passed them.
    plan = cuforge.op.Conv2dFprop(element=np.float16)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(input=x, weight=w, output=y, padding=(1, 1))
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(x, w, None, y, (1, 1), (1, 1), (1, 1), 1.0, 0.0)
    # NumPy operands are checked as if on the device before any copy.
    host = [np.zeros(t.shape, np.float16) for t in (x, w, y)]
    with pytest.raises(cuforge.DeviceError):
        plan.run(host[0], host[1], None, host[2], padding=1)


@pytest.mark.parametrize("change, says", [
    (dict(y=nhwc((2, 8, 7, 32), 2)), r"^D: expected P \(height\) = 9"),
    (dict(y=nhwc((2, 9, 7, 16), 2)), r"^D: expected K \(channels\) = 32"),
    (dict(w=nhwc((32, 3, 3, 8), 1)), r"^B: expected C \(channels\) = 16"),
    (dict(x=nhwc((2, 9, 7, 16), 0, np.float32)), "^A .*: expected element type f16"),
    (dict(x=nhwc((126, 16), 0)), "^A: expected a rank-4"),
    (dict(x=FakeDeviceArray((2, 9, 7, 16), np.float16, strides=(2016, 112, 16, 1), ptr=0x10_0000_0000)),
     "^A: expected dense NHWC"),
    # Its dense strides (8·8·2**62) wrapped past int64, named in the message: the size is refused first.
    (dict(x=FakeDeviceArray((1, 8, 8, 2**62), np.float16, strides=(0, 0, 0, 1), ptr=0x10_0000_0000)),
     "^A: .* elements of 2 bytes: CUTLASS's convolution kernels address tensors below 2 GiB"),
    (dict(x=nhwc((2, 9, 7, 3), 0), w=nhwc((32, 3, 3, 3), 1)), "^A: 3 channels: .* pad the channels with zeros to 8"),
    (dict(stride=(0, 1)), "^stride: expected 1 or more"),
    (dict(padding=-1), "^padding: expected 0 or more"),
    (dict(dilation=(1, 0)), "^dilation: expected 1 or more"),
    (dict(stride="2"), "^stride: expected an integer or"),
    (dict(beta=1.0), "^C: beta is 1"),
    (dict(C=nhwc((16,), 3)), "^C: expected a bias of 32"),
    (dict(split_k=("serial", 0)), "^split_k slices: expected 1 or more"),
    (dict(split_k=("serial", 5000)), "^split_k: expected 1 to 1024 slices"),
    (dict(split_k=("stream", 2)), "^split_k: the mode is 'serial' or 'parallel'"),
    (dict(split_k=(np.array(["serial", "x"]), 2)), "^split_k: the mode is 'serial' or 'parallel'"),
    (dict(split_k=("serial", 2**40)), "^split_k: expected 1 to 1024 slices, got 1099511627776$"),
    (dict(x=FakeDeviceArray((2**64, 9, 7, 16), np.float16, ptr=0x10_0000_0000)), "^A: an extent, stride or address beyond 64"),
    (dict(y=FakeDeviceArray((2, 9, 7, 32), np.float16, ptr=0x10_0000_0000)), "^D: the output overlaps input A"),
])
def test_bad_inputs_are_refused_by_name(change, says):
    x, w, y = fprop_operands()
    operands = dict(x=x, w=w, y=y)
    operands.update({k: v for k, v in change.items() if k in operands})
    options = dict(padding=1)
    options.update({k: v for k, v in change.items() if k not in operands})
    C = options.pop("C", None)
    plan = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    with pytest.raises(cuforge.Error, match=says):
        plan.run(operands["x"], operands["w"], C, operands["y"], **options)


def test_a_host_tensor_and_a_bias_vector():
    x, w, y = fprop_operands()
    plan = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    with pytest.raises(cuforge.InvalidArgumentError, match="^C: expected a bias of 32"):
        plan.run(x, w, np.zeros(31, np.float16), y, padding=1, beta=1.0)


def test_compile_takes_convolution_problems():
    plan = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^problems: expected \(\(N, H, W, C, K, R, S\)"):
        plan.compile(problems=[(32, 56, 56)])
    with pytest.raises(cuforge.InvalidArgumentError, match="^alignment_A: expected a power of two from 1 to 8"):
        plan.compile(alignment_A=16)


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_alignments_cap_the_constructed_kernel(kind):
    # The CUTLASS Python interface's construct(alignment_A=..., ...): the kernel's vectors along each
    # operand's channels, at most those given (the channels of the problem allow 8 elements of f16).
    plan = cuforge.op.Conv2d(kind=kind, element=np.float16, element_accumulator=np.float32)
    assert "_a8x8x8" in plan.construct().name
    assert plan.construct(alignment_A=8, alignment_B=8, alignment_C=8).name == plan.construct().name
    narrow = plan.construct(alignment_A=2, alignment_B=2, alignment_C=2).name
    assert "_a2x2x2" in narrow, narrow
    with pytest.raises(cuforge.InvalidArgumentError, match="^alignment_C: expected a power of two from 1 to 8"):
        plan.construct(alignment_C=16)


def test_construct_takes_the_geometry_given_without_a_problem():
    plan = cuforge.op.Conv2d(kind="dgrad", element=np.float16, element_accumulator=np.float32)
    default = plan.construct().name
    assert plan.construct(stride=1, padding=1).name == default  # the default layer's own geometry
    strided = plan.construct(stride=2).name
    assert strided != default and strided == plan.construct(problem=(32, 56, 56, 64, 64, 3, 3), stride=2, padding=1).name


def test_construct_takes_the_interfaces_problem_size_and_builds_fixed_channels_without_one():
    """The interface built a fixed-channel kernel with no problem given (to export it): a stem of one vector of
    channels (alignment_A's where given); and construct(problem=) takes its Conv2DProblemSize, geometry too."""
    plan = cuforge.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32)
    plan.iterator_algorithm = "fixed_channels"
    assert plan.construct().name.endswith("_a8x8x8_fixedchannels")
    assert plan.construct(alignment_A=4, alignment_B=4).name.endswith("_a4x4x4_fixedchannels")
    free = cuforge.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32)
    assert free.construct(iterator_algorithm="fixed_channels").name.endswith("_fixedchannels")
    size = cutlass.shape.Conv2DProblemSize(2, 9, 7, 16, 32, 3, 3, 16, 1, 1, 2, 2, 1, 1)
    assert free.construct(problem=size).name == free.construct(problem=(2, 9, 7, 16, 32, 3, 3), stride=(2, 2),
                                                               padding=(1, 1)).name
    grouped = cutlass.shape.Conv2DProblemSize(2, 9, 7, 16, 32, 3, 3, 8, 1, 1, 2, 2, 1, 1, groups=2)
    with pytest.raises(cuforge.InvalidArgumentError, match="^problem: a grouped convolution"):
        free.construct(problem=grouped)


def test_plans_from_tensors_construct_what_plans_from_types_do():
    # construct() sizes nothing by the plan's tensors: the CUTLASS Python interface compares plans built
    # from tensors of any size with plans built from types by the source they emit.
    f16 = np.float16
    tensors = cuforge.op.Conv2d(kind="fprop", A=np.zeros((2, 2), f16), B=np.zeros((2, 2), f16),
                                C=np.zeros((2, 2), f16), D=np.zeros((2, 2), f16), element_accumulator=np.float32)
    types = cuforge.op.Conv2d(kind="fprop", element=f16, element_accumulator=np.float32)
    aligned = dict(alignment_A=8, alignment_B=8, alignment_C=8)
    assert tensors.construct(**aligned).rt_module.emit() == types.construct(**aligned).rt_module.emit()


def test_the_seed_problem_size():
    ps = cutlass.shape.Conv2DProblemSize(32, 224, 224, 3, 64, 7, 7, 3, 3, 3, 2, 2, 1, 1)
    assert (ps.P, ps.Q) == (112, 112)
    assert ps.stride == (2, 2) and ps.padding == (3, 3) and ps.dilation == (1, 1)
    dilated = cutlass.shape.Conv2DProblemSize(1, 9, 7, 16, 8, 3, 3, 16, 0, 1, 1, 2, 2, 1,
                                              mode=cutlass.ConvMode.CrossCorrelation)
    assert (dilated.P, dilated.Q) == (5, 4)
    # Grouped sizes, as the interface's test lists build them: kept (a run reads its tensors, never these).
    grouped = cutlass.shape.Conv2DProblemSize(1, 8, 8, 128, 256, 3, 3, 64, 1, 1, 1, 1, 1, 1, groups=2)
    assert (grouped.C, grouped.groups, grouped.P, grouped.Q) == (128, 2, 8, 8)
    with pytest.raises(cuforge.InvalidArgumentError, match="^groups: expected 1 or more"):
        cutlass.shape.Conv2DProblemSize(1, 8, 8, 16, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, groups=0)
    with pytest.raises(cuforge.InvalidArgumentError, match="^mode: cuforge's kernels compute cross-correlation"):
        cutlass.shape.Conv2DProblemSize(1, 8, 8, 16, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, mode=cutlass.ConvMode.Convolution)
    with pytest.raises(cuforge.InvalidArgumentError, match="^mode: cuforge's kernels compute cross-correlation"):
        cutlass.shape.Conv2DProblemSize(1, 8, 8, 16, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, mode=np.array([1, 2]))
    # Sizes no convolution has are kept, as the interface's test lists hold them (and skip them by P and Q).
    too_small = cutlass.shape.Conv2DProblemSize(1, 4, 4, 16, 16, 7, 7, 16, 0, 0, 1, 1, 1, 1)
    assert (too_small.P, too_small.Q) == (-2, -2)
    with pytest.raises(cuforge.InvalidArgumentError, match="^implicit_gemm_size: the output of .* has no pixels"):
        too_small.implicit_gemm_size("fprop")
    assert cutlass.shape.Conv2DProblemSize(1, 14, 14, 1392, 1536, 3, 3, 232, 1, 1, 1, 1, 1, 1, 0, 1, 3).groups == 3
    with pytest.raises(cuforge.InvalidArgumentError, match="^stride_h: expected 1 or more"):
        cutlass.shape.Conv2DProblemSize(1, 8, 8, 16, 16, 3, 3, 16, 1, 1, 0, 1, 1, 1)


def test_the_seed_swizzling_stride_pins_an_identity_swizzle(caplog):
    sm80 = cutlass.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32, kernel_cc=80)
    assert sm80.swizzling_stride is None, "cuforge chooses until one is pinned"
    sm80.swizzling_stride = 4
    assert sm80.swizzling_functor == cutlass.swizzle.IdentitySwizzle4 and sm80.swizzling_stride == 4
    assert "_identity4_" in sm80.construct().name
    sm80.swizzling_stride = 8
    assert sm80.swizzling_functor == cutlass.swizzle.IdentitySwizzle8 and "_default_a8" in sm80.construct().name
    for bad in (3, True, [2], "2"):
        with pytest.raises(cuforge.InvalidArgumentError, match="^swizzling_stride: expected 1, 2, 4 or 8"):
            sm80.swizzling_stride = bad
    assert sm80.swizzling_stride == 8, "a refused stride leaves the plan as it was"
    # A hint the interface's users give for its SM80 kernels: on SM90 kernels, which take none, logged.
    sm90 = cutlass.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32, kernel_cc=90)
    with caplog.at_level(logging.INFO, logger="cuforge"):
        sm90.swizzling_stride = 2
    assert sm90.swizzling_stride is None and "swizzling_stride 2: this plan's SM90 kernels take no" in caplog.text
    sm90.swizzling_functor = cutlass.swizzle.IdentitySwizzle2  # as the interface's SM90 kernels, left alone
    assert sm90.swizzling_functor is None
    with pytest.raises(cuforge.InvalidArgumentError, match="SM90 convolution kernels run a CTA per tile"):
        sm90.swizzling_functor = cutlass.swizzle.ThreadblockSwizzleStreamK


def test_the_seed_output_size():
    assert cutlass.op.Conv2d.output_size((32, 224, 224, 3), (64, 7, 7, 3), (3, 3), (2, 2), (1, 1)) == (32, 112, 112, 64)
    assert cutlass.op.Conv2dWgrad.output_size((1, 9, 7, 16), (8, 3, 3, 16), (0, 1), (1, 2), (2, 1)) == (1, 5, 4, 8)
    with pytest.raises(cuforge.InvalidArgumentError, match="^R: the filter spans 7 rows"):
        cutlass.op.Conv2d.output_size((1, 4, 4, 8), (8, 7, 7, 8), (0, 0), (1, 1), (1, 1))
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^output_size: expected input_size \(N, H, W, C\)"):
        cutlass.op.Conv2d.output_size((1, 4, 4), (8, 3, 3, 8), 0, 1, 1)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^C: the filters' channels \(4\) must equal"):
        cutlass.op.Conv2d.output_size((1, 8, 8, 8), (8, 3, 3, 4), 0, 1, 1)
    with pytest.raises(cuforge.InvalidArgumentError, match="^stride: expected 1 or more"):
        cutlass.op.Conv2d.output_size((1, 8, 8, 8), (8, 3, 3, 8), 0, 0, 1)
    with pytest.raises(cuforge.InvalidArgumentError, match="^padding: the output's rows number 6442450939, past"):
        cutlass.op.Conv2d.output_size((1, 2**31 - 1, 2**31 - 1, 8), (8, 3, 3, 8), 2**31 - 1, 1, 1)


def test_the_seed_iterator_algorithm_pins_the_iterators(caplog):
    plan = cutlass.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32)
    stem = dict(stride=2, padding=3)
    assert plan.iterator_algorithm is None
    assert plan.select(1, 224, 224, 8, 64, 7, 7, **stem).endswith("_fixedchannels"), "the seed's proposal too"
    plan.iterator_algorithm = "optimized"
    assert plan.iterator_algorithm == cutlass.IteratorAlgorithm.Optimized
    assert not plan.select(1, 224, 224, 8, 64, 7, 7, **stem).endswith("_fixedchannels")
    plan.iterator_algorithm = cutlass.IteratorAlgorithm.FixedChannels
    with pytest.raises(cuforge.InvalidArgumentError, match=r"iterator_algorithm is fixed_channels: .* \(8, 4, 2, 1 here\); this convolution's input has 64"):
        plan.select(1, 56, 56, 64, 64, 3, 3, padding=1)
    with pytest.raises(cuforge.InvalidArgumentError, match="^iterator_algorithm: expected a cuforge.IteratorAlgorithm"):
        plan.iterator_algorithm = "fast"
    assert plan.iterator_algorithm == cutlass.IteratorAlgorithm.FixedChannels, "a refused value changes nothing"
    # The interface's iterators cuforge does not build (the same results): logged, cuforge chooses.
    for name in ("analytic", "few_channels"):
        with caplog.at_level(logging.INFO, logger="cuforge"):
            plan.iterator_algorithm = name
        assert plan.iterator_algorithm is None and f"iterator_algorithm {name}: cuforge builds" in caplog.text
        plan.iterator_algorithm = "fixed_channels"
    plan.iterator_algorithm = None
    dgrad = cutlass.op.Conv2d(kind="dgrad", element=np.float16, element_accumulator=np.float32)
    with pytest.raises(cuforge.InvalidArgumentError, match="^iterator_algorithm fixed_channels: fprop's iterators"):
        dgrad.iterator_algorithm = "fixed_channels"
    assert dgrad.iterator_algorithm is None


def test_construct_and_compile_take_the_seeds_arguments_in_its_order(caplog):
    """The interface's Conv2d.construct(tile_description, alignment_A/B/C, iterator_algorithm, stride_support,
    swizzling_functor, epilogue_functor) and compile(..., print_module): construct's for that choice only,
    compile's set on the plan as their properties set them; stride_support logged (cuforge chooses)."""
    plan = cutlass.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32)
    stem = dict(problem=(1, 224, 224, 8, 64, 7, 7), stride=2, padding=3)
    assert plan.construct(**stem).name.endswith("_fixedchannels")
    with caplog.at_level(logging.INFO, logger="cuforge"):
        op = plan.construct(None, None, None, None, "optimized", "Strided", cutlass.swizzle.IdentitySwizzle1,
                            cutlass.epilogue.relu, **stem)
    assert op.name.endswith("_relu") and "_fixedchannels" not in op.name
    assert "stride_support Strided: cuforge chooses" in caplog.text
    assert "swizzling_functor Identity1: this plan's SM90 kernels take no" in caplog.text
    assert plan.iterator_algorithm is None and plan.activation == cutlass.epilogue.identity, "the plan kept its own"
    assert plan.construct(**stem).name.endswith("_fixedchannels")
    for bad, says in ((dict(epilogue_functor=3), "^epilogue_functor \\(an activation"),
                      (dict(stride_support="sideways"), "^stride_support: expected StrideSupport"),
                      (dict(iterator_algorithm="fast"), "^iterator_algorithm: expected")):
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            plan.construct(**bad)
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            plan.compile(**bad)
    assert plan.activation == cutlass.epilogue.identity and plan.iterator_algorithm is None
    assert list(inspect.signature(plan.compile).parameters)[:9] == [
        "tile_description", "alignment_A", "alignment_B", "alignment_C", "iterator_algorithm", "stride_support",
        "swizzling_functor", "epilogue_functor", "print_module"]


def test_a_refused_compile_leaves_the_seeds_settings_as_they_were():
    """compile()'s iterator_algorithm, swizzling_functor and epilogue_functor are set for good only by a build
    that is not refused: by its own arguments (stride 0) or by the core (an alignment the type cannot have)."""
    plan = cutlass.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32)
    seed = dict(iterator_algorithm="fixed_channels", epilogue_functor=cutlass.epilogue.relu)
    with pytest.raises(cuforge.InvalidArgumentError, match="^stride: expected 1 or more"):
        plan.compile(stride=0, **seed)
    with pytest.raises(cuforge.InvalidArgumentError, match="alignment_A"):
        plan.compile(alignment_A=3, **seed)
    assert plan.iterator_algorithm is None and plan.activation == cutlass.epilogue.identity
