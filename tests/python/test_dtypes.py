"""Element types: the spellings cuforge accepts (NumPy, names, DataType; torch is optional and never
imported by cuforge itself), and operands whose type differs from the plan's."""

from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pytest

import cuforge
import cuforge.dtypes
from cuforge.dtypes import to_datatype
from fake_arrays import operands, row_major

DT = cuforge.DataType


@pytest.mark.parametrize("spelling, expected", [
    (np.float16, DT.f16), (np.dtype("float16"), DT.f16), ("float16", DT.f16), ("half", DT.f16), ("f16", DT.f16),
    ("bfloat16", DT.bf16), ("bf16", DT.bf16),
    (np.float32, DT.f32), ("float32", DT.f32), ("float", DT.f32), ("f32", DT.f32),
    ("tf32", DT.tf32), ("tfloat32", DT.tf32),
    (np.float64, DT.f64), ("double", DT.f64),
    (np.int8, DT.s8), ("int8", DT.s8), (np.dtype("int8"), DT.s8), (np.uint8, DT.u8), (np.int32, DT.s32),
    ("int32", DT.s32), (np.dtype("float64"), DT.f64), ("float64", DT.f64),
    ("float8_e4m3fn", DT.e4m3), ("float8_e5m2", DT.e5m2), ("e4m3", DT.e4m3),
    (DT.bf16, DT.bf16),
])
def test_spellings(spelling, expected):
    assert to_datatype(spelling) == expected


def _fake_torch(with_fp8: bool):
    """A stand-in for the torch module: dtype objects whose type lives in module "torch"."""
    dtype = type("dtype", (), {"__module__": "torch", "__repr__": lambda self: f"torch.{self.name}"})
    module = types.ModuleType("torch")
    names = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int32"]
    names += ["float8_e4m3fn", "float8_e5m2"] if with_fp8 else []
    for name in names:
        d = dtype()
        d.name = name
        setattr(module, name, d)
    return module


@pytest.mark.parametrize("with_fp8", [True, False])
def test_torch_dtypes(monkeypatch, with_fp8):
    torch = _fake_torch(with_fp8)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(cuforge.dtypes, "_TORCH", {})  # the table is filled from the torch in use
    expected = {"int8": DT.s8, "int32": DT.s32, "float64": DT.f64, "uint8": DT.u8, "bfloat16": DT.bf16}
    if with_fp8:
        expected.update(float8_e4m3fn=DT.e4m3, float8_e5m2=DT.e5m2)
    for name, dt in expected.items():
        assert to_datatype(getattr(torch, name)) == dt, name
        assert cuforge.dtypes.torch_datatype(getattr(torch, name)) == dt, name
    if not with_fp8:  # an older torch: its other dtypes still map, fp8 names as strings too
        assert to_datatype("float8_e4m3fn") == DT.e4m3


def test_real_torch_dtypes():
    torch = pytest.importorskip("torch")
    assert to_datatype(torch.int8) == DT.s8
    assert to_datatype(torch.int32) == DT.s32
    assert to_datatype(torch.float64) == DT.f64
    for name, dt in [("float8_e4m3fn", DT.e4m3), ("float8_e5m2", DT.e5m2)]:
        if hasattr(torch, name):
            assert to_datatype(getattr(torch, name)) == dt


@pytest.mark.parametrize("spelling", ["f17", "complex64", np.complex64, np.uint16, np.bool_, 3, object()])
def test_unknown_spellings_are_data_type_errors(spelling):
    with pytest.raises(cuforge.DataTypeError, match="no element type"):
        to_datatype(spelling)


def test_importing_cuforge_does_not_import_torch():
    code = "import sys, cuforge; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


OPERAND_TYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "s8", "uint8": "u8", "int32": "s32"}
no_gpu = pytest.mark.skipif(cuforge.device_count() > 0,
                            reason="accepted runs are recognised by the DeviceError of a machine without a GPU")


@no_gpu
@pytest.mark.parametrize("plan_type", ["float16", "float32"])
@pytest.mark.parametrize("operand_type", list(OPERAND_TYPES))
@pytest.mark.parametrize("operand", "ABCD")
def test_operand_of_another_type_is_refused(plan_type, operand_type, operand):
    plan = cuforge.op.Gemm(element=plan_type, layout=cuforge.LayoutType.RowMajor)
    ops = dict(zip("ABCD", operands(64, 32, 48, plan_type)))
    shape = {"A": (64, 48), "B": (48, 32), "C": (64, 32), "D": (64, 32)}[operand]
    ops[operand] = row_major(*shape, dtype=operand_type, name=operand)
    with pytest.raises((cuforge.DataTypeError, cuforge.DeviceError)) as info:
        plan.run(ops["A"], ops["B"], ops["C"], ops["D"], beta=1.0)
    if operand_type == plan_type:
        assert isinstance(info.value, cuforge.DeviceError), f"an operand of the plan's type was refused: {info.value}"
        return
    message = str(info.value)
    assert isinstance(info.value, cuforge.DataTypeError), message
    assert message.startswith(operand + ": "), message
    assert f"expected element type {OPERAND_TYPES[plan_type]}" in message, message
    assert f"got {OPERAND_TYPES[operand_type]}" in message, message


@no_gpu
def test_bf16_plan_refuses_f16_operands():
    plan = cuforge.op.Gemm(element="bf16", layout=cuforge.LayoutType.RowMajor)
    with pytest.raises(cuforge.DataTypeError, match=r"^A: expected element type bf16 \(the plan's element_A\), got f16"):
        plan.run(*operands(64, 32, 48, np.float16), beta=1.0)


def test_the_interfaces_per_library_conversions():
    """cutlass.utils.datatypes' numpy_library_type and kin: a library's own type, else None; getattr_enum takes
    an option in snake case."""
    import cuforge.utils.datatypes as datatypes

    assert datatypes.numpy_library_type(np.float16) == cuforge.DataType.f16
    assert datatypes.numpy_library_type(np.dtype("int8")) == cuforge.DataType.s8
    assert datatypes.numpy_library_type(np.complex128) is None  # NumPy's, without a kernel
    assert datatypes.numpy_library_type("f16") is None and datatypes.numpy_library_type(cuforge.DataType.f16) is None
    assert datatypes.torch_library_type(np.float16) is None  # not torch's
    assert datatypes.to_camel_case("row_major") == "RowMajor"
    assert datatypes.getattr_enum(cuforge.LayoutType, "column_major") == cuforge.LayoutType.ColumnMajor
    with pytest.raises(cuforge.InvalidArgumentError, match="^Invalid option: diagonal"):
        datatypes.getattr_enum(cuforge.LayoutType, "diagonal")
