"""The main job: one bf16 GEMM through the whole pipeline (select, emit, compile, run), checked.

On a machine without a GPU it selects, emits and compiles the kernel, and says that no GPU was
found to run it.
"""

import sys
import time

import cuforge

M, N, K = 4096, 4096, 4096

plan = cuforge.op.Gemm(element=cuforge.DataType.bf16, layout=cuforge.LayoutType.RowMajor)
kernel = plan.select(M, N, K)
print(f"kernel for {M}x{N}x{K} bf16: {kernel}")
start = time.perf_counter()
built = plan.compile(M=M, N=N, K=K)
print(f"{'found in the cache' if built.cache_hit else 'compiled'} in {time.perf_counter() - start:.1f} s: "
      f"{built.library}")

if cuforge.device_count() == 0:
    print("no CUDA GPU was found on this machine: the kernel was selected, emitted and compiled, but not run")
    raise SystemExit(0)

try:
    import torch  # noqa: E402  (only needed where there is a GPU)
except ImportError as e:
    print(f"a GPU was found: this example runs the kernel on PyTorch tensors, and torch could not be imported "
          f"({e}; pip install torch)", file=sys.stderr)
    raise SystemExit(1)

gen = torch.Generator(device="cuda").manual_seed(0)
A = torch.randint(-3, 4, (M, K), device="cuda", generator=gen).to(torch.bfloat16)
B = torch.randint(-3, 4, (K, N), device="cuda", generator=gen).to(torch.bfloat16)
D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
plan.run(A, B, None, D)
reference = (A.double() @ B.double()).to(torch.bfloat16)
exact = torch.equal(D, reference)

start_evt, end_evt = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for _ in range(5):
    plan.run(A, B, None, D, sync=False)
start_evt.record()
for _ in range(20):
    plan.run(A, B, None, D, sync=False)
end_evt.record()
end_evt.synchronize()
ms = start_evt.elapsed_time(end_evt) / 20
print(f"result {'matches the reference exactly' if exact else 'DIFFERS from the reference'}; "
      f"{ms:.3f} ms per GEMM, {2 * M * N * K / ms / 1e9:.0f} TFLOP/s on {torch.cuda.get_device_name()}")
raise SystemExit(0 if exact else 1)
