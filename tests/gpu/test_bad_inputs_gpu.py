"""Bad inputs to Gemm.run with real CUDA tensors: each one refused before anything is launched, with
a cuforge.Error naming the operand, and D left bit for bit as it was; the plan still computes
correct results afterwards, in the same process. Unusual inputs that are valid (padded leading
dimensions, a pointer two elements into an allocation, C aliasing D, host arrays, empty problems)
are run and checked against the exact reference.

tests/python/test_validation.py drives the same checks on the CPU with fake device arrays; this
mirrors its cases with torch tensors, and with CuPy-style views of real allocations for what torch
cannot express (a pointer inside an element, byte strides, negative strides).

One plan (f16 in, f32 accumulation, f16 out, row-major) and two problem sizes keep the module to two
kernels: SHAPE's (16-byte aligned: SM90) and FALLBACK's (leading dimensions of 2 mod 4 elements,
which TMA cannot load: SM80 with alignment 2); an odd leading dimension or pointer takes a third.
"""

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

import cuforge  # noqa: E402
from exact import ROW, assert_exact, poisoned, rand_int, reference  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "python"))
from fake_arrays import FakeDeviceArray  # noqa: E402

F16 = torch.float16
SHAPE = (72, 40, 56)  # M, N, K: multiples of 8, so packed operands are 16-byte aligned
FALLBACK = (70, 42, 50)  # N and K of 2 mod 4: only SM80 kernels of alignment 2 load such rows
M, N, K = SHAPE
InvalidArgumentError, DataTypeError = cuforge.InvalidArgumentError, cuforge.DataTypeError


@pytest.fixture(scope="module")
def plan():
    """The plan every test here shares: its kernels built first, then one correct run, so that the
    refusals are also checked with a selection remembered."""
    plan = cuforge.op.Gemm(element=F16, element_accumulator=torch.float32, layout=cuforge.LayoutType.RowMajor)
    kernels = sorted({plan.select(*shape, batch) for shape in (SHAPE, FALLBACK) for batch in (1, 2)})
    print(f"\nbad inputs: {len(kernels)} kernels")
    cuforge.build(kernels)
    check_correct_run(plan)
    return plan


def packed(m, n, k, batch=None):
    """Integer A, B, C and a NaN D, packed and row-major."""
    return dict(A=rand_int(m, k, F16, ROW, batch=batch), B=rand_int(k, n, F16, ROW, batch=batch),
                C=rand_int(m, n, F16, ROW, batch=batch), D=poisoned(m, n, F16, ROW, batch=batch))


def check_correct_run(plan):
    ops = packed(*SHAPE)
    plan.run(ops["A"], ops["B"], ops["C"], ops["D"], alpha=2.0, beta=-1.0)
    assert_exact(ops["D"], reference(ops["A"], ops["B"], ops["C"], 2.0, -1.0, F16))


# --------------------------------------------------------------------------------------------------
# Refused


def ones(*shape, dtype=F16):
    return torch.ones(shape, dtype=dtype, device="cuda")


def column_major(rows, cols):
    return ones(cols, rows).t()


def view(t, shape, byte_offset=0, byte_strides=None):
    """A CuPy-style view of t's memory, as torch cannot make it (never dereferenced: refused first)."""
    return FakeDeviceArray(shape, np.float16, ptr=t.data_ptr() + byte_offset, byte_strides=byte_strides)


def d_over_b(base):
    rows = ones(K - 1 + M, N)  # B's last row is D's first
    return dict(B=rows[:K], D=rows[K - 1:])


def c_half_over_d(base):
    rows = ones(M + M // 2, N)
    return dict(C=rows[M // 2:], D=rows[:M])


@dataclass
class Bad:
    what: str
    change: Callable  # the base operands -> what replaces them (operands A-D, alpha, beta, stream)
    error: type
    operand: Optional[str]  # the message starts with "<operand>: "; None: see `says`
    says: tuple = ()


BAD = [
    # Element types
    Bad("A is f32", lambda o: dict(A=ones(M, K, dtype=torch.float32)), DataTypeError, "A",
        ("expected element type f16 (the plan's element_A)", "got f32")),
    Bad("A is bf16", lambda o: dict(A=ones(M, K, dtype=torch.bfloat16)), DataTypeError, "A", ("got bf16",)),
    Bad("A is u8", lambda o: dict(A=ones(M, K, dtype=torch.uint8)), DataTypeError, "A", ("got u8",)),
    Bad("A is fp8 e4m3", lambda o: dict(A=ones(M, K).to(torch.float8_e4m3fn)), DataTypeError, "A", ("got e4m3",)),
    Bad("A is complex64", lambda o: dict(A=ones(M, K, dtype=torch.complex64)), DataTypeError, "A",
        ("no element type",)),
    Bad("B is f32", lambda o: dict(B=ones(K, N, dtype=torch.float32)), DataTypeError, "B", ("element_B", "got f32")),
    Bad("B is s8", lambda o: dict(B=ones(K, N, dtype=torch.int8)), DataTypeError, "B", ("got s8",)),
    Bad("B is int16", lambda o: dict(B=ones(K, N, dtype=torch.int16)), DataTypeError, "B", ("no element type",)),
    Bad("C is f32", lambda o: dict(C=ones(M, N, dtype=torch.float32)), DataTypeError, "C", ("element_C", "got f32")),
    Bad("C is f64", lambda o: dict(C=ones(M, N, dtype=torch.float64)), DataTypeError, "C", ("got f64",)),
    Bad("D is f32", lambda o: dict(D=ones(M, N, dtype=torch.float32)), DataTypeError, "D", ("element_D", "got f32")),
    Bad("D is bf16", lambda o: dict(D=ones(M, N, dtype=torch.bfloat16)), DataTypeError, "D", ("got bf16",)),
    Bad("D is s32", lambda o: dict(D=ones(M, N, dtype=torch.int32)), DataTypeError, "D", ("got s32",)),
    Bad("D is bool", lambda o: dict(D=ones(M, N, dtype=torch.bool)), DataTypeError, "D", ("no element type",)),
    # Shapes
    Bad("K mismatch: B has K + 8 rows", lambda o: dict(B=ones(K + 8, N)), InvalidArgumentError, "B",
        (f"expected {K} rows (K, the columns of A), got {K + 8}",)),
    Bad("K mismatch: B has K - 1 rows", lambda o: dict(B=ones(K - 1, N)), InvalidArgumentError, "B", (f"got {K - 1}",)),
    Bad("D has N + 8 columns", lambda o: dict(D=ones(M, N + 8)), InvalidArgumentError, "D",
        (f"expected shape (M, N) = ({M}, {N}) from A and B, got ({M}, {N + 8})",)),
    Bad("D has M + 1 rows", lambda o: dict(D=ones(M + 1, N)), InvalidArgumentError, "D", (f"got ({M + 1}, {N})",)),
    Bad("D is N x M", lambda o: dict(D=ones(N, M)), InvalidArgumentError, "D", (f"got ({N}, {M})",)),
    Bad("C has M - 1 rows", lambda o: dict(C=ones(M - 1, N)), InvalidArgumentError, "C",
        (f"expected shape (M, N) = ({M}, {N}) like D",)),
    Bad("C has N + 1 columns", lambda o: dict(C=ones(M, N + 1)), InvalidArgumentError, "C", ("expected shape (M, N)",)),
    # Ranks
    Bad("A is a vector", lambda o: dict(A=ones(K)), InvalidArgumentError, "A", ("got rank 1",)),
    Bad("B is a vector", lambda o: dict(B=ones(K)), InvalidArgumentError, "B", ("got rank 1",)),
    Bad("D is a vector", lambda o: dict(D=ones(M * N)), InvalidArgumentError, "D", ("got rank 1",)),
    # Rank-4 operands fold their batch dimensions (the seed's (2, 3, M, K)); an input's must be D's.
    Bad("A batched over two dimensions, D one matrix", lambda o: dict(A=ones(2, 1, M, K)), InvalidArgumentError, "A",
        ("batch shape (2, 1) is not D's ()",)),
    Bad("A's batch shape (3, 2), D's (2, 3)",
        lambda o: dict(A=ones(3, 2, M, K), C=None, D=ones(2, 3, M, N), beta=0.0), InvalidArgumentError, "A",
        ("batch shape (3, 2) is not D's (2, 3)",)),
    Bad("C is a scalar", lambda o: dict(C=ones()), InvalidArgumentError, "C", ("got rank 0",)),
    Bad("A has 2^31 rows", lambda o: dict(A=ones(1, K).expand(2**31, K)), InvalidArgumentError, "A",
        ("exceed the 32-bit range",)),
    # Host memory
    Bad("A is a CPU tensor", lambda o: dict(A=o["A"].cpu()), InvalidArgumentError, "A", ("got one in host memory",)),
    Bad("C is a CPU tensor", lambda o: dict(C=o["C"].cpu()), InvalidArgumentError, "C", ("got one in host memory",)),
    Bad("D is a CPU tensor", lambda o: dict(D=o["D"].cpu()), InvalidArgumentError, "D", ("got one in host memory",)),
    # Layouts and strides
    Bad("A is column-major (a transposed view)", lambda o: dict(A=column_major(M, K)), InvalidArgumentError, "A",
        ("expected a row-major matrix (the plan's layout_A)",)),
    Bad("B is column-major", lambda o: dict(B=column_major(K, N)), InvalidArgumentError, "B", ("layout_B",)),
    Bad("C is column-major", lambda o: dict(C=column_major(M, N)), InvalidArgumentError, "C", ("layout_C",)),
    Bad("D is column-major", lambda o: dict(D=column_major(M, N)), InvalidArgumentError, "D",
        ("expected a row-major matrix",)),
    Bad("D is every other column", lambda o: dict(D=ones(M, 2 * N)[:, ::2]), InvalidArgumentError, "D",
        ("unit stride along the columns",)),
    Bad("rows of A overlap", lambda o: dict(A=ones(M * K).as_strided((M, K), (K - 8, 1))), InvalidArgumentError, "A",
        (f"leading dimension of at least {K}",)),
    Bad("B is one row expanded", lambda o: dict(B=ones(1, N).expand(K, N)), InvalidArgumentError, "B",
        ("expected a row-major matrix",)),
    Bad("A's pointer is one byte in", lambda o: dict(A=view(o["A"], (M, K), byte_offset=1)), InvalidArgumentError, "A",
        ("not aligned to its 2-byte elements",)),
    Bad("D's pointer is three bytes in", lambda o: dict(D=view(o["D"], (M, N), byte_offset=3)), InvalidArgumentError,
        "D", ("not aligned",)),
    Bad("A's byte strides are not whole elements", lambda o: dict(A=view(o["A"], (M, K), byte_strides=(2 * K, 3))),
        InvalidArgumentError, "A", ("not whole elements",)),
    Bad("A's rows run backwards",
        lambda o: dict(A=view(o["A"], (M, K), byte_offset=2 * (M - 1) * K, byte_strides=(-2 * K, 2))),
        InvalidArgumentError, "A", ("negative strides",)),
    # Batches
    Bad("batch counts differ", lambda o: dict(A=ones(2, M, K), B=ones(3, K, N), C=None, D=ones(3, M, N), beta=0.0),
        InvalidArgumentError, "A", ("expected a batch of 3 like D",)),
    Bad("C has a batch of 2, D of 3", lambda o: dict(A=ones(3, M, K), B=ones(3, K, N), C=ones(2, M, N),
                                                     D=ones(3, M, N)),
        InvalidArgumentError, "C", ("expected a batch of 3 like D",)),
    Bad("D's batches share memory",
        lambda o: dict(A=ones(2, M, K), B=ones(2, K, N), C=None, D=ones(1, M, N).expand(2, M, N), beta=0.0),
        InvalidArgumentError, "D", ("batch stride of 0",)),
    Bad("A's batches overlap",
        lambda o: dict(A=ones(2 * M * K).as_strided((2, M, K), ((M - 1) * K, K, 1)), B=ones(2, K, N), C=None,
                       D=ones(2, M, N), beta=0.0),
        InvalidArgumentError, "A", ("batches overlap",)),
    # Epilogue
    Bad("beta = 1 without C", lambda o: dict(C=None), InvalidArgumentError, "C", ("beta is 1 but no C",)),
    # Aliasing
    Bad("D overlaps A", lambda o: dict(D=o["A"][:, :N]), InvalidArgumentError, "D", ("overlaps input A",)),
    Bad("D overlaps B", d_over_b, InvalidArgumentError, "D", ("overlaps input B",)),
    Bad("C lies half over D", c_half_over_d, InvalidArgumentError, "D", ("partly overlaps C",)),
    # Not tensors
    Bad("no A", lambda o: dict(A=None), InvalidArgumentError, "A", ("no tensor was given",)),
    Bad("no D", lambda o: dict(D=None), InvalidArgumentError, "D", ("no output tensor was given",)),
    Bad("A is a list", lambda o: dict(A=[[1.0] * K] * M), InvalidArgumentError, "A",
        ("expected a PyTorch tensor, a CuPy or JAX array", "got list")),
    Bad("B is a string", lambda o: dict(B="B"), InvalidArgumentError, "B", ("got str",)),
    Bad("C is a float", lambda o: dict(C=1.0), InvalidArgumentError, "C", ("got float",)),
    Bad("stream is a string", lambda o: dict(stream="default"), InvalidArgumentError, "stream", ("got str",)),
    Bad("stream is -1", lambda o: dict(stream=-1), InvalidArgumentError, "stream", ("0 or more", "got -1")),
    Bad("sync is a string", lambda o: dict(sync="yes"), InvalidArgumentError, "sync", ("expected True or False",)),
    Bad("alpha is a string", lambda o: dict(alpha="two"), InvalidArgumentError, "alpha"),
]


def attempt(plan, case):
    """How a bad input fared: 'refused cleanly', 'refused unclearly', 'crash' or 'silent wrong
    result', and what was wrong."""
    base = packed(*SHAPE)
    base["D"] = rand_int(M, N, F16, ROW)  # finite, so that torch.equal can tell it is unchanged
    run = {"alpha": 1.0, "beta": 1.0, "stream": None, "sync": True, **base, **case.change(base)}
    watched = [t for t in (base["D"], run["D"]) if isinstance(t, torch.Tensor)]
    before = [t.clone() for t in watched]
    try:
        plan.run(run["A"], run["B"], run["C"], run["D"], alpha=run["alpha"], beta=run["beta"], stream=run["stream"],
                 sync=run["sync"])
        torch.cuda.synchronize()
    except cuforge.Error as e:
        error = e
    except Exception as e:
        return "crash", f"{type(e).__name__} is no cuforge.Error: {e}"
    else:
        return "silent wrong result", "the run was accepted"
    if not all(torch.equal(b, t) for b, t in zip(before, watched)):
        return "silent wrong result", f"refused ({error}), but D was written"
    message = str(error)
    if type(error) is not case.error:
        return "refused unclearly", f"{type(error).__name__}, not {case.error.__name__}: {message}"
    missing = [s for s in case.says if s not in message]
    if (case.operand and not message.startswith(case.operand + ": ")) or missing:
        return "refused unclearly", f"the message does not start with {case.operand!r} or lacks {missing}: {message}"
    return "refused cleanly", ""


def test_bad_inputs_are_refused_cleanly(plan):
    outcomes = {case.what: attempt(plan, case) for case in BAD}
    kinds = [kind for kind, _ in outcomes.values()]
    print(f"\nbad inputs: {len(BAD)} cases, {kinds.count('refused cleanly')} refused cleanly, "
          f"{kinds.count('refused unclearly')} refused unclearly, {kinds.count('crash')} crashes, "
          f"{kinds.count('silent wrong result')} silent wrong results")
    problems = [f"{what}: {kind}: {detail}" for what, (kind, detail) in outcomes.items() if kind != "refused cleanly"]
    assert not problems, "\n".join(problems)


def test_plan_still_correct_after_bad_inputs(plan):
    check_correct_run(plan)


# --------------------------------------------------------------------------------------------------
# Accepted: run, and exact. Every problem is SHAPE or FALLBACK (a batch of at most 2) or runs no
# kernel, so the two kernels built by the fixture are all the module needs, but for K = 0 with
# beta != 0 (one more, built when it runs).


def with_(ops, **changes):
    return {**ops, **changes}


def shifted(rows, cols, elements):
    """A NaN matrix `elements` into its allocation."""
    return torch.full((elements + rows * cols,), float("nan"), dtype=F16, device="cuda")[elements:].view(rows, cols)


def side_stream():
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    return stream


def in_place(ops):
    return with_(ops, D=ops["C"])


def host_a(ops):
    return with_(ops, A=ops["A"].cpu().numpy())


FM, FN, FK = FALLBACK
ACCEPTED = {
    "packed": lambda: packed(*SHAPE),
    "alpha 2, beta -1": lambda: with_(packed(*SHAPE), alpha=2.0, beta=-1.0),
    "alpha 0": lambda: with_(packed(*SHAPE), alpha=0.0),
    "no C, beta 0": lambda: with_(packed(*SHAPE), C=None, beta=0.0),
    "C is D": lambda: in_place(packed(*SHAPE)),
    "leading dimensions padded to multiples of 8": lambda: dict(
        A=rand_int(M, K, F16, ROW, ld=K + 8), B=rand_int(K, N, F16, ROW, ld=N + 16),
        C=rand_int(M, N, F16, ROW, ld=N + 8), D=poisoned(M, N, F16, ROW, ld=N + 24)),
    "rank 3, a batch of 1": lambda: packed(*SHAPE, batch=1),
    "a batch of 2": lambda: packed(*SHAPE, batch=2),
    "a batch of 2, batches padded": lambda: dict(
        A=rand_int(M + 8, K, F16, ROW, batch=2)[:, :M], B=rand_int(K, N, F16, ROW, batch=2),
        C=rand_int(M + 16, N, F16, ROW, batch=2)[:, :M], D=poisoned(M + 8, N, F16, ROW, batch=2)[:, :M]),
    "A a NumPy array": lambda: host_a(packed(*SHAPE)),
    "on a side stream": lambda: with_(packed(*SHAPE), stream=side_stream()),
    "M = 0": lambda: packed(0, N, K),
    "N = 0": lambda: packed(M, 0, K),
    "a batch of 0": lambda: packed(*SHAPE, batch=0),
    "K = 0, beta 0 (D = 0)": lambda: with_(packed(M, N, 0), beta=0.0),
    "K = 0, beta 2 (D = 2 C, a kernel over zero operands)": lambda: with_(packed(M, N, 0), beta=2.0),
    "fallback: packed": lambda: packed(*FALLBACK),
    "fallback: alpha 2, beta -1": lambda: with_(packed(*FALLBACK), alpha=2.0, beta=-1.0),
    "fallback: C is D": lambda: in_place(packed(*FALLBACK)),
    "fallback: a batch of 2": lambda: packed(*FALLBACK, batch=2),
    "fallback: A padded to 2 mod 4": lambda: with_(packed(*FALLBACK), A=rand_int(FM, FK, F16, ROW, ld=FK + 8)),
    "fallback: D two elements into its allocation": lambda: with_(packed(*FALLBACK), D=shifted(FM, FN, 2)),
    # One element: SM80's two-stage kernels loading through registers (library::pipelined), built when run.
    "A's leading dimension odd": lambda: with_(packed(*SHAPE), A=rand_int(M, K, F16, ROW, ld=K + 1)),
    "D one element into its allocation": lambda: with_(packed(*SHAPE), D=shifted(M, N, 1)),
}


@pytest.mark.parametrize("make", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_unusual_but_valid_inputs_run_exactly(plan, make):
    run = {"alpha": 1.0, "beta": 1.0, "stream": None, **make()}
    A, B, C = (None if x is None else torch.as_tensor(x, device="cuda") for x in (run["A"], run["B"], run["C"]))
    expected = reference(A, B, C, run["alpha"], run["beta"], F16)  # before the run: C may be D
    handle = plan.run(run["A"], run["B"], run["C"], run["D"], alpha=run["alpha"], beta=run["beta"],
                      stream=run["stream"], sync=False)
    handle.sync()
    assert_exact(run["D"], expected)
