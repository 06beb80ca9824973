"""Validation of GEMM runs through the Python front, on the CPU.

Operands are fake device arrays (``__cuda_array_interface__`` around made-up pointers). A run the
checks accept stops at the device with cuforge.DeviceError (this machine has no GPU: that error is
the proof that validation let the operands through); a refused one raises InvalidArgumentError or
DataTypeError whose message starts with the operand's name.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import cuforge
from cuforge.arrays import current_stream
from fake_arrays import BASE, FakeDeviceArray, col_major, operands, row_major

pytestmark = pytest.mark.skipif(cuforge.device_count() > 0,
                                reason="accepted runs are recognised by the DeviceError of a machine without a GPU")

RowMajor, ColumnMajor = cuforge.LayoutType.RowMajor, cuforge.LayoutType.ColumnMajor
LAYOUT = {"r": RowMajor, "c": ColumnMajor}


@lru_cache(maxsize=None)
def plan_for(dtype: str = "float16", layouts: str = "rrr") -> cuforge.op.Gemm:
    return cuforge.op.Gemm(element=np.dtype(dtype), layout_A=LAYOUT[layouts[0]], layout_B=LAYOUT[layouts[1]],
                           layout_C=LAYOUT[layouts[2]])


def outcome(plan, A, B, C, D, beta=None):
    """'accepted', or the cuforge.Error the run raised."""
    try:
        plan.run(A, B, C, D, beta=beta)
    except cuforge.DeviceError as e:
        assert "no CUDA GPU was found" in str(e), str(e)
        return "accepted"
    except cuforge.Error as e:
        return e
    raise AssertionError("a run without a GPU returned")


# --- A table of bad inputs -------------------------------------------------------------------------

M, N, K = 64, 32, 48


def base():
    return dict(zip("ABCD", operands(M, N, K, np.float16, "rrr")))


def with_(**changes):
    ops = base()
    ops.update(changes)
    return ops


@dataclass
class Bad:
    what: str
    ops: dict
    error: type
    operand: str
    says: list = field(default_factory=list)
    plan: tuple = ("float16", "rrr")
    beta: Optional[float] = None


f16, f32 = np.float16, np.float32

BAD = [
    Bad("A is f32", with_(A=row_major(M, K, f32, "A")), cuforge.DataTypeError, "A", ["expected element type f16", "got f32"]),
    Bad("B is f32", with_(B=row_major(K, N, f32, "B")), cuforge.DataTypeError, "B", ["element_B", "got f32"]),
    Bad("C is f64", with_(C=row_major(M, N, np.float64, "C")), cuforge.DataTypeError, "C", ["got f64"]),
    Bad("D is int8", with_(D=row_major(M, N, np.int8, "D")), cuforge.DataTypeError, "D", ["got s8"]),
    Bad("A is f16 in an f32 plan", dict(zip("ABCD", operands(M, N, K, f32))) | {"A": row_major(M, K, f16, "A")},
        cuforge.DataTypeError, "A", ["expected element type f32", "got f16"], plan=("float32", "rrr")),
    Bad("A is a vector", with_(A=FakeDeviceArray((K,), f16, ptr=BASE["A"])), cuforge.InvalidArgumentError, "A",
        ["expected a matrix", "got rank 1"]),
    Bad("K mismatch", with_(B=row_major(K + 1, N, f16, "B")), cuforge.InvalidArgumentError, "B",
        ["expected 48 rows", "got 49"]),
    Bad("D shape", with_(D=row_major(M, N + 1, f16, "D")), cuforge.InvalidArgumentError, "D",
        ["expected shape (M, N) = (64, 32)", "got (64, 33)"]),
    Bad("C shape", with_(C=row_major(M - 1, N, f16, "C")), cuforge.InvalidArgumentError, "C",
        ["expected shape (M, N) = (64, 32)", "got (63, 32)"]),
    Bad("column-major A in a row-major plan", with_(A=col_major(M, K, f16, "A")), cuforge.InvalidArgumentError, "A",
        ["expected a row-major matrix", "layout_A"]),
    Bad("transposed view of B", with_(B=FakeDeviceArray((K, N), f16, strides=(1, K), ptr=BASE["B"])),
        cuforge.InvalidArgumentError, "B", ["expected a row-major matrix"]),
    Bad("every other column of D", with_(D=FakeDeviceArray((M, N), f16, strides=(2 * N, 2), ptr=BASE["D"])),
        cuforge.InvalidArgumentError, "D", ["unit stride along the columns"]),
    Bad("rows of A overlap", with_(A=row_major(M, K, f16, "A", ld=K - 8)), cuforge.InvalidArgumentError, "A",
        ["leading dimension of at least 48"]),
    Bad("row-major A in a column-major-A plan", base(), cuforge.InvalidArgumentError, "A",
        ["expected a column-major matrix"], plan=("float16", "crr")),
    Bad("A on another GPU", with_(A=row_major(M, K, f16, "A", device=1)), cuforge.InvalidArgumentError, "A",
        ["expected a tensor on cuda:0", "got one on cuda:1"]),
    Bad("misaligned A", with_(A=FakeDeviceArray((M, K), f16, ptr=BASE["A"] + 1)), cuforge.InvalidArgumentError, "A",
        ["not aligned to its 2-byte elements"]),
    Bad("misaligned D", with_(D=FakeDeviceArray((M, N), f16, ptr=BASE["D"] + 3)), cuforge.InvalidArgumentError, "D",
        ["not aligned"]),
    Bad("byte strides that are not whole elements",
        with_(A=FakeDeviceArray((M, K), f16, byte_strides=(2 * K, 3), ptr=BASE["A"])), cuforge.InvalidArgumentError,
        "A", ["not whole elements"]),
    Bad("negative stride", with_(A=FakeDeviceArray((M, K), f16, strides=(-K, 1), ptr=BASE["A"] + 2 * M * K)),
        cuforge.InvalidArgumentError, "A", ["negative strides"]),
    Bad("M past 32 bits", with_(A=row_major(2**31, K, f16, "A"), D=row_major(2**31, N, f16, "D")),
        cuforge.InvalidArgumentError, "A", ["exceed the 32-bit range"]),
    Bad("beta without C", with_(C=None), cuforge.InvalidArgumentError, "C", ["beta is 1", "no C"], beta=1.0),
    Bad("D overlaps A", with_(D=FakeDeviceArray((M, N), f16, ptr=BASE["A"] + 128)), cuforge.InvalidArgumentError, "D",
        ["overlaps input A"]),
    Bad("D overlaps B", with_(D=FakeDeviceArray((M, N), f16, ptr=BASE["B"])), cuforge.InvalidArgumentError, "D",
        ["overlaps input B"]),
    Bad("C half over D", with_(C=FakeDeviceArray((M, N), f16, ptr=BASE["D"] + M * N)), cuforge.InvalidArgumentError,
        "D", ["partly overlaps C"]),
    Bad("batch counts differ",
        dict(A=FakeDeviceArray((2, M, K), f16, ptr=BASE["A"]), B=FakeDeviceArray((3, K, N), f16, ptr=BASE["B"]),
             C=None, D=FakeDeviceArray((3, M, N), f16, ptr=BASE["D"])),
        cuforge.InvalidArgumentError, "A", ["expected a batch of 3"], beta=0.0),
    Bad("D's batches on the same memory",
        dict(A=FakeDeviceArray((2, M, K), f16, ptr=BASE["A"]), B=FakeDeviceArray((2, K, N), f16, ptr=BASE["B"]),
             C=None, D=FakeDeviceArray((2, M, N), f16, strides=(0, N, 1), ptr=BASE["D"])),
        cuforge.InvalidArgumentError, "D", ["batch stride of 0"], beta=0.0),
    Bad("bias of the wrong length", with_(C=FakeDeviceArray((N + 1,), f16, ptr=BASE["C"])),
        cuforge.InvalidArgumentError, "C", ["bias of N"]),
]


@pytest.mark.parametrize("case", BAD, ids=[b.what for b in BAD])
def test_bad_inputs_are_refused_naming_the_operand(case):
    plan = plan_for(*case.plan)
    ops = case.ops
    beta = case.beta if case.beta is not None else (1.0 if ops["C"] is not None else 0.0)
    result = outcome(plan, ops["A"], ops["B"], ops["C"], ops["D"], beta=beta)
    assert result != "accepted", "the run was accepted"
    assert type(result) is case.error, f"{type(result).__name__}: {result}"
    message = str(result)
    if case.operand:
        assert message.startswith(case.operand + ": "), message
    else:
        assert message[:1] in "ABCD" and message[1:3] == ": ", message
    for part in case.says:
        assert part in message, f"{part!r} not in {message!r}"


def test_accepted_layouts_and_views():
    for layouts in ["rrr", "rcr", "crr", "ccr", "rrc", "ccc"]:
        assert outcome(plan_for("float16", layouts), *operands(M, N, K, f16, layouts), beta=1.0) == "accepted", layouts
    # Padded leading dimensions, a transposed view for a column-major plan, C aliasing D, no C.
    A = row_major(M, K, f16, "A", ld=K + 8)
    B = col_major(K, N, f16, "B", ld=K + 16)
    D = row_major(M, N, f16, "D", ld=N + 3)
    assert outcome(plan_for("float16", "rcr"), A, B, D, D, beta=1.0) == "accepted"
    assert outcome(plan_for("float16", "rcr"), A, B, None, D, beta=0.0) == "accepted"
    # M = 1 with any leading stride; empty problems.
    A1 = FakeDeviceArray((1, K), f16, strides=(7, 1), ptr=BASE["A"])
    D1 = FakeDeviceArray((1, N), f16, strides=(1, 1), ptr=BASE["D"])
    assert outcome(plan_for(), A1, operands(M, N, K)[1], None, D1, beta=0.0) == "accepted"
    assert outcome(plan_for(), *operands(0, N, K), beta=1.0) == "accepted"
    assert outcome(plan_for(), *operands(M, N, 0), beta=0.0) == "accepted"
    # Batches.
    Ab = FakeDeviceArray((4, M, K), f16, ptr=BASE["A"])
    Bb = FakeDeviceArray((4, K, N), f16, ptr=BASE["B"])
    Db = FakeDeviceArray((4, M, N), f16, ptr=BASE["D"])
    assert outcome(plan_for(), Ab, Bb, None, Db, beta=0.0) == "accepted"


@pytest.mark.parametrize("op", ["gemm", "grouped", "conv"])
def test_sync_and_stream_of_the_wrong_kind_are_refused_before_the_run(op):
    f16 = np.float16
    if op == "conv":
        plan = cuforge.op.Conv2d(kind="fprop", element=f16, element_accumulator=np.float32)
        ops = [FakeDeviceArray(s, f16, ptr=BASE[n]) for s, n in (((1, 8, 8, 8), "A"), ((8, 3, 3, 8), "B"))]
        ops += [None, FakeDeviceArray((1, 6, 6, 8), f16, ptr=BASE["D"])]
    else:
        ops = [row_major(M, K, f16, "A"), row_major(K, N, f16, "B"), None, row_major(M, N, f16, "D")]
        plan = plan_for()
        if op == "grouped":
            plan, ops = cuforge.op.GroupedGemm(element=f16, layout=RowMajor), [None if x is None else [x] for x in ops]
    for kwargs, says in ((dict(sync="yes"), "^sync: expected True or False, got 'yes'"),
                         (dict(stream=-1), r"^stream: expected a stream handle \(an int of 0 or more, 64 bits\), got -1"),
                         (dict(stream=True), "^stream: expected an integer handle"),
                         (dict(stream=types.SimpleNamespace(cuda_stream=None)),
                          r"^stream.cuda_stream: expected a stream handle \(an int of 0 or more, 64 bits\), got None"),
                         (dict(stream=types.SimpleNamespace(ptr=2**64)), "^stream.ptr: expected a stream handle")):
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            plan.run(*ops, **kwargs)
    with pytest.raises(cuforge.DeviceError):
        plan.run(*ops, sync=np.bool_(False))


def _stream_type(name, module, **methods):
    """A stand-in for another library's stream class (its module and name are what cuforge reads)."""
    return type(name, (), {"__module__": module, **methods})


@pytest.mark.parametrize("stream, handle", [
    (0x5000, 0x5000),
    (_stream_type("Stream", "cuda.core", __cuda_stream__=lambda self: (0, 0x5001))(), 0x5001),
    (_stream_type("Stream", "torch.cuda", cuda_stream=0x5002)(), 0x5002),
    (_stream_type("Stream", "cupy.cuda", ptr=0x5003)(), 0x5003),
    (_stream_type("CUstream", "cuda.bindings.driver", __int__=lambda self: 0x5004)(), 0x5004),
    (_stream_type("CUstream", "cuda.cuda", __int__=lambda self: 0)(), 0),  # the CUTLASS interface's default
    (_stream_type("cudaStream_t", "cuda.bindings.runtime", __int__=lambda self: 0x5005)(), 0x5005),
], ids=["int", "protocol", "torch", "cupy", "CUstream", "CUstream(0)", "cudaStream_t"])
def test_a_stream_of_every_kind_runs_on_its_handle(stream, handle):
    assert current_stream((), stream) == handle


@pytest.mark.parametrize("stream, says", [
    (_stream_type("Stream", "cuda.core", __cuda_stream__=lambda self: (1, 5))(),
     r"^stream.__cuda_stream__\(\): expected \(0, handle\), got \(1, 5\)"),
    (_stream_type("Stream", "cuda.core", __cuda_stream__=lambda self: (0, -5))(),
     r"^stream.__cuda_stream__\(\): expected a stream handle"),
    (_stream_type("Stream", "mylib", __cuda_stream__=(0, 5))(),
     r"^stream.__cuda_stream__: expected a method returning \(0, handle\), got \(0, 5\)"),
    (_stream_type("CUstream", "mylib", __int__=lambda self: 5)(), "^stream: expected an integer handle"),
    (object(), "^stream: expected an integer handle, a torch.cuda.Stream, a cupy Stream or a CUDA Python stream, "
               "got object"),
])
def test_a_stream_of_no_known_kind_is_refused_naming_what_was_read(stream, says):
    with pytest.raises(cuforge.InvalidArgumentError, match=says):
        current_stream((), stream)


def test_unknown_element_type_of_an_operand_names_it():
    result = outcome(plan_for(), *with_(A=row_major(M, K, np.uint16, "A")).values(), beta=1.0)
    assert isinstance(result, cuforge.DataTypeError)
    assert str(result).startswith("A: "), str(result)


def test_rank_4_operand_names_it():
    result = outcome(plan_for(), *with_(B=FakeDeviceArray((1, 1, K, N), f16, ptr=BASE["B"])).values(), beta=1.0)
    assert isinstance(result, cuforge.InvalidArgumentError)
    assert str(result).startswith("B: "), str(result)


# --- Property: random shapes, strides, dtypes and layouts against a small model of the rules -----

DTYPES = ["float16", "float32", "float64", "int8"]
STYLES = ["packed", "padded", "transposed", "broadcast", "strided", "one_row_any_ld"]


@dataclass
class Operand:
    """What the model knows of an operand: its element type, shape and strides in elements."""

    dtype: str
    shape: tuple
    strides: tuple


def make_strides(rows: int, cols: int, layout: str, style: str, pad: int):
    """Strides (in elements) of a rows x cols view in one of the styles, relative to `layout`."""
    row = layout == "r"
    if style == "transposed":  # the other layout's packed strides
        row = not row
        style = "packed"
    if style == "packed":
        return (cols, 1) if row else (1, rows)
    if style == "padded":
        return (cols + pad, 1) if row else (1, rows + pad)
    if style == "broadcast":  # stride 0 along the leading dimension
        return (0, 1) if row else (1, 0)
    if style == "strided":  # every other element along the contiguous dimension
        return (2 * cols, 2) if row else (2, 2 * rows)
    if style == "one_row_any_ld":
        return (pad, 1) if row else (1, pad)
    raise ValueError(style)


def layout_ok(op: Operand, layout: str) -> bool:
    """Unit stride along the layout's contiguous dimension, leading dimension >= its extent
    (either is free when the extent it steps over is at most 1)."""
    rows, cols = op.shape
    sr, sc = op.strides
    if layout == "r":
        contiguous, extent, outer, outer_extent = sc, cols, sr, rows
    else:
        contiguous, extent, outer, outer_extent = sr, rows, sc, cols
    return (contiguous == 1 or extent <= 1) and (outer >= extent or outer_extent <= 1)


def model(plan_dtype: str, layouts: str, ops: dict, beta: float):
    """The first operand the rules refuse and the error class, or None when all is accepted."""
    for name in "ABD":
        if ops[name].dtype != plan_dtype:
            return name, cuforge.DataTypeError
    if ops["C"] is None:
        if beta != 0:
            return "C", cuforge.InvalidArgumentError
    elif ops["C"].dtype != plan_dtype:
        return "C", cuforge.DataTypeError
    (m, k), (kb, n) = ops["A"].shape, ops["B"].shape
    if kb != k:
        return "B", cuforge.InvalidArgumentError
    if ops["D"].shape != (m, n):
        return "D", cuforge.InvalidArgumentError
    # C is D-shaped, or a bias row (1 x N, M > 1) broadcast over a row-major D's rows.
    bias = ops["C"] is not None and ops["C"].shape == (1, n) and m > 1
    if ops["C"] is not None and ops["C"].shape != (m, n) and not (bias and layouts[2] == "r"):
        return "C", cuforge.InvalidArgumentError
    for name, layout in (("A", layouts[0]), ("B", layouts[1]), ("D", layouts[2]), ("C", layouts[2])):
        if ops[name] is not None and not layout_ok(ops[name], layout):
            return name, cuforge.InvalidArgumentError
    return None


@st.composite
def gemm_runs(draw):
    plan_dtype = draw(st.sampled_from(["float16", "float32"]))
    layouts = draw(st.sampled_from(["rrr", "rcr", "crr", "ccr", "rrc", "rcc", "crc", "ccc"]))
    M, N, K = (draw(st.integers(0, 300)) for _ in range(3))
    has_c = draw(st.booleans())
    beta = draw(st.sampled_from([0.0, 1.0, 0.5])) if has_c else draw(st.sampled_from([0.0, 0.0, 0.0, 1.0]))

    def operand(name, rows, cols, layout):
        # Mostly the right element type and shape, sometimes not; packed or padded views, sometimes
        # others (so that about a third of the runs are accepted).
        dtype = plan_dtype if draw(st.integers(0, 24)) else draw(st.sampled_from(DTYPES))
        if not draw(st.integers(0, 24)):
            rows = max(0, rows + draw(st.sampled_from([-1, 1, 7])))
        if not draw(st.integers(0, 24)):
            cols = max(0, cols + draw(st.sampled_from([-1, 1, 5])))
        style = draw(st.sampled_from(STYLES)) if not draw(st.integers(0, 2)) else draw(st.sampled_from(["packed", "padded"]))
        pad = draw(st.integers(0, 40))
        return Operand(dtype, (rows, cols), make_strides(rows, cols, layout, style, pad))

    ops = {
        "A": operand("A", M, K, layouts[0]),
        "B": operand("B", K, N, layouts[1]),
        "C": operand("C", M, N, layouts[2]) if has_c else None,
        "D": operand("D", M, N, layouts[2]),
    }
    return plan_dtype, layouts, ops, beta


def fake(op: Optional[Operand], name: str):
    if op is None:
        return None
    return FakeDeviceArray(op.shape, np.dtype(op.dtype), strides=op.strides, ptr=BASE[name])


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(gemm_runs())
@example(("float16", "rrr", {"A": Operand("float16", (1, 48), (3, 1)), "B": Operand("float16", (48, 32), (32, 1)),
                              "C": None, "D": Operand("float16", (1, 32), (0, 1))}, 0.0))
@example(("float32", "rcc", {"A": Operand("float32", (0, 0), (0, 1)), "B": Operand("float32", (0, 5), (1, 0)),
                              "C": None, "D": Operand("float32", (0, 5), (1, 0))}, 0.0))
def test_validation_agrees_with_a_model_of_the_rules(run):
    plan_dtype, layouts, ops, beta = run
    result = outcome(plan_for(plan_dtype, layouts), *(fake(ops[n], n) for n in "ABCD"), beta=beta)
    expected = model(plan_dtype, layouts, ops, beta)
    if result == "accepted":
        assert expected is None, f"accepted, but the model refuses {expected[0]} ({expected[1].__name__})"
        return
    message = str(result)
    assert message[:1] in "ABCD" and message[1:3] == ": ", f"message does not start with an operand: {message}"
    assert expected is not None, f"refused, but the model accepts: {message}"
    operand, error = expected
    assert message.startswith(operand + ": "), f"model refuses {operand}, cuforge said: {message}"
    assert type(result) is error, f"expected {error.__name__}, got {type(result).__name__}: {message}"


@pytest.mark.parametrize("shapes", [((0, 4), (4, 8), (0, 8)), ((4, 0), (0, 8), (4, 8)), ((4, 4), (4, 0), (4, 0))],
                         ids=["M=0", "K=0", "N=0"])
def test_numpy_arrays_without_elements_are_described_by_their_order(shapes):
    """NumPy 2 gives an array without elements strides of 0 (no layout has them): such an operand is described
    with the strides of its order, as torch's are, not refused for its leading dimension."""
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    a, b, d = (np.zeros(s, np.float16) for s in shapes)
    try:
        plan.run(a, b, None, d)
    except cuforge.DeviceError as e:  # without a GPU the run goes as far as the device
        assert "no CUDA GPU was found" in str(e)


def test_a_read_only_device_output_is_refused():
    d = FakeDeviceArray((8, 8), np.float16, ptr=BASE["D"])
    d.__cuda_array_interface__["data"] = (BASE["D"], True)
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    a, b = (FakeDeviceArray((8, 8), np.float16, ptr=BASE[n]) for n in "AB")
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: the array is read-only"):
        plan.run(a, b, None, d)
