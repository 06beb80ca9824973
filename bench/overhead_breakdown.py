import time, torch, cuforge
from cuforge.arrays import describe
plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)
A = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16); B = torch.randn_like(A); D = torch.empty_like(A)
for _ in range(100): plan.run(A, B, None, D, sync=False)
torch.cuda.synchronize()
def t(f, n=2000):
    s = time.perf_counter()
    for _ in range(n): f()
    torch.cuda.synchronize()
    return (time.perf_counter() - s) / n * 1e6
descs = [describe(x, "A") for x in (A, B, D)]
st = torch._C._cuda_getCurrentRawStream(0)
print("describe x3      %.2f us" % t(lambda: [describe(x, "A") for x in (A, B, D)]))
print("core run         %.2f us" % t(lambda: plan._plan.run(descs[0], descs[1], None, descs[2], 1.0, 0.0, st, None)))
print("plan.run         %.2f us" % t(lambda: plan.run(A, B, None, D, sync=False)))
print("torch.matmul     %.2f us" % t(lambda: torch.matmul(A, B, out=D)))
