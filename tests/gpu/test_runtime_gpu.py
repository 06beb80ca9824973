"""On the GPU: f16 accumulation, and that repeated runs of a plan allocate nothing.

f16 accumulation is exact here because every partial sum of products of integers in [-3, 3] over
K = 136 stays below 2048, where f16 still represents every integer.
"""

import os

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402

M, N, K = 264, 200, 136


def f16_acc_plan(kernel_cc):
    return cuforge.op.Gemm(element=torch.float16, element_accumulator=torch.float16,
                           layout=cuforge.LayoutType.RowMajor, kernel_cc=kernel_cc)


@pytest.fixture(scope="module", autouse=True)
def prebuilt():
    names = [f16_acc_plan(cc).select(M, N, K) for cc in (None, 80)]
    cuforge.build(names)


def rand_int(rows, cols, gen):
    return torch.randint(-3, 4, (rows, cols), device="cuda", generator=gen).to(torch.float16)


@pytest.mark.parametrize("kernel_cc", [None, 80], ids=["default", "sm80"])
def test_f16_accumulation_is_exact(kernel_cc):
    gen = torch.Generator(device="cuda").manual_seed(7)
    plan = f16_acc_plan(kernel_cc)
    assert "_f16_f16_f16_f16_f16_" in plan.select(M, N, K)
    A, B, C = rand_int(M, K, gen), rand_int(K, N, gen), rand_int(M, N, gen)
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A, B, C, D, beta=1.0)
    assert torch.equal(D, (A.double() @ B.double() + C.double()).half())


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_ten_thousand_runs_leave_memory_flat():
    gen = torch.Generator(device="cuda").manual_seed(8)
    plan = f16_acc_plan(None)
    A, B = rand_int(M, K, gen), rand_int(K, N, gen)
    D = torch.empty((M, N), device="cuda", dtype=torch.float16)
    for _ in range(100):  # first runs load the kernel and fill the pools
        plan.run(A, B, None, D, sync=False)
    torch.cuda.synchronize()
    free_before, _ = torch.cuda.mem_get_info()
    rss_before = resident_bytes()
    for _ in range(10_000):
        plan.run(A, B, None, D, sync=False)
    torch.cuda.synchronize()
    free_after, _ = torch.cuda.mem_get_info()
    rss_after = resident_bytes()
    print(f"10000 runs: device free memory {free_before - free_after:+d} bytes, "
          f"host resident {rss_after - rss_before:+d} bytes")
    assert free_before - free_after == 0
    assert rss_after - rss_before < 1 << 20  # allocator noise, not a per-run leak (10000 runs)
