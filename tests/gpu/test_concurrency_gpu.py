"""Many host threads at once, and CUDA graphs.

Threads: eight, each on its own torch stream, run GEMMs at the same time, sharing one plan or each
with its own, of one shape or of several (K-heavy ones with workspaces among them); every result
is exact (integer data, exact.py). Graphs: every decomposition, SM90 and SM80, captured (ten runs,
a workspace-needing one among them) and replayed twice, exact each time. Chains: data-parallel SM90
kernels start while the kernel before them ends (programmatic dependent launch), so runs that each
read what the run before wrote and overwrite what it read, queued back to back, directly and in a
graph, must still see every write in order.
"""

from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import ROW, assert_exact, rand_int, reference  # noqa: E402
from prebuild import build_selected  # noqa: E402

THREADS, ROUNDS = 8, 20
SHAPES = [(264, 200, 136), (128, 128, 8192), (512, 384, 256), (96, 1024, 4096)]  # the second and fourth split K
DECOMPOSITIONS = {
    "heuristic": {},
    "data_parallel": dict(decomposition=cuforge.Decomposition.DataParallel),
    "stream_k": dict(decomposition=cuforge.Decomposition.StreamK),
    "split_k4": dict(split_k_slices=4),
    "parallel_split_k8": dict(split_k_slices=8, decomposition=cuforge.Decomposition.ParallelSplitK),
}
# Square K x K steps (D feeds the next run as A): a 64x64 ping-pong, a 128x64 cooperative and a
# swapped small-M kernel by the model's choice.
CHAIN_SHAPES = [(512, 512, 512), (1024, 1024, 1024), (16, 1024, 1024)]
CHAIN_STEPS = 20
GRAPH_SHAPE = (192, 136, 8192)  # few output tiles and a long K: every decomposition divides K
# f16: SM80's serial split-K adds each slice to D in D's type; the sums of this data stay below
# 2048, where f16 holds every integer, so every decomposition is exact.
DTYPE = torch.float16


def plan(kernel_cc=None, **settings):
    p = cuforge.op.Gemm(element=DTYPE, layout=cuforge.LayoutType.RowMajor, kernel_cc=kernel_cc)
    for name, value in settings.items():
        setattr(p, name, value)
    return p


@pytest.fixture(scope="module", autouse=True)
def prebuilt():
    selections = [lambda s=s: plan().select(*s) for s in SHAPES + CHAIN_SHAPES]
    selections += [lambda cc=cc, d=d: plan(cc, **d).select(*GRAPH_SHAPE) for cc in (None, 80)
                   for d in DECOMPOSITIONS.values()]
    build_selected(selections)


def operands(shape, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    m, n, k = shape
    return (rand_int(m, k, DTYPE, ROW, gen), rand_int(k, n, DTYPE, ROW, gen),
            rand_int(m, n, DTYPE, ROW, gen))


@pytest.mark.parametrize("shared", [True, False], ids=["one_plan", "a_plan_each"])
@pytest.mark.parametrize("shapes", [SHAPES[:1], SHAPES], ids=["one_shape", "four_shapes"])
def test_threads_on_their_own_streams(shared, shapes):
    common = plan()
    data = [operands(shapes[i % len(shapes)], i) for i in range(THREADS)]
    refs = [reference(A, B, C, 1.0, 1.0, DTYPE) for A, B, C in data]
    torch.cuda.synchronize()
    errors = []
    start = threading.Barrier(THREADS)

    def work(i):
        try:
            p = common if shared else plan()
            stream = torch.cuda.Stream()
            A, B, C = data[i]
            with torch.cuda.stream(stream):
                outputs = [torch.empty_like(C) for _ in range(ROUNDS)]
                start.wait()
                for D in outputs:
                    p.run(A, B, C, D, beta=1.0, sync=False)
            stream.synchronize()
            for D in outputs:
                assert_exact(D, refs[i])
        except Exception as e:  # reported by the main thread
            errors.append(f"thread {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("kernel_cc", [None, 80], ids=["sm90", "sm80"])
@pytest.mark.parametrize("name", DECOMPOSITIONS)
def test_cuda_graph_capture_and_replay(kernel_cc, name):
    p = plan(kernel_cc, **DECOMPOSITIONS[name])
    A, B, C = operands(GRAPH_SHAPE, 11)
    ref = reference(A, B, C, 1.0, 1.0, DTYPE)
    outputs = [torch.full_like(C, float("nan")) for _ in range(10)]
    p.run(A, B, C, outputs[0], beta=1.0)  # built and loaded before the capture
    kernel = p.last_kernel
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for D in outputs:
            p.run(A, B, C, D, beta=1.0, sync=False)
    assert p.last_kernel == kernel
    for replay in range(2):
        for D in outputs:
            D.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for D in outputs:
            assert_exact(D, ref)


def chain(p, A, P, X, Y):
    """CHAIN_STEPS runs queued back to back, ping-ponging between X and Y: X <- A (a torch kernel),
    then Y <- X P, X <- Y P, ...: each run reads the previous one's D and writes over its A."""
    X.copy_(A)
    for step in range(CHAIN_STEPS):
        src, dst = (X, Y) if step % 2 == 0 else (Y, X)
        p.run(src, P, None, dst, sync=False)
    return X if CHAIN_STEPS % 2 == 0 else Y


@pytest.mark.parametrize("graph", [False, True], ids=["stream", "graph"])
@pytest.mark.parametrize("shape", CHAIN_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_back_to_back_runs_each_reading_the_one_before(shape, graph):
    m, _, k = shape
    p = plan()
    assert "_sm90_" in p.select(*shape) and "_default_" in p.select(*shape)  # a programmatic dependent
    gen = torch.Generator(device="cuda").manual_seed(12)
    A = rand_int(m, k, DTYPE, ROW, gen)
    perm = torch.randperm(k, device="cuda", generator=gen)
    P = torch.zeros(k, k, device="cuda", dtype=DTYPE)
    P[perm, torch.arange(k, device="cuda")] = 1  # (X P)[:, j] = X[:, perm[j]]
    columns = torch.arange(k, device="cuda")
    for _ in range(CHAIN_STEPS):
        columns = columns[perm]
    expected = A[:, columns]
    X, Y = torch.full_like(A, float("nan")), torch.full_like(A, float("nan"))
    p.run(A, P, None, Y)  # built and loaded first
    if not graph:
        out = chain(p, A, P, X, Y)
        torch.cuda.synchronize()
        assert torch.equal(out, expected)
        return
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=torch.cuda.Stream()):
        out = chain(p, A, P, X, Y)
    for _ in range(2):
        X.fill_(float("nan"))
        Y.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, expected)
