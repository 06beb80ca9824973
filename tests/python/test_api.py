"""The Python front on the CPU: seed-compatible names, plan construction, tile descriptions,
selection, the catalog and emission, and what happens without a GPU. Nothing here compiles a
kernel (the C++ suite compiles the two the CI budget allows)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import cuforge
import cuforge as cutlass  # the seed's spelling must work unchanged
from fake_arrays import no_gpu, operands
from fresh_process import run_python

RowMajor, ColumnMajor = cuforge.LayoutType.RowMajor, cuforge.LayoutType.ColumnMajor

# The catalog's size per family (the C++ suite asserts the same numbers).
# GEMM, grouped, Conv2d (SM80 fprop twice, and once more for one 16-bit channel; 16-bit dgrad's 36 narrow tiles;
# SIMT conv: 41 a kind)
SM90_KERNELS, SM80_KERNELS = 5293 + 651 + 3 * 108, 3704 + 480 + 4 * 222 + 60 + 36 + 3 * 41


# --- Names ---------------------------------------------------------------------------------------


def test_seed_names_are_exported():
    for name in ["op", "LayoutType", "DataType", "TileDescription", "OpcodeClass", "MathOperation",
                 "KernelScheduleType", "EpilogueScheduleType", "TileSchedulerType", "Error",
                 "InvalidArgumentError", "DataTypeError", "DeviceError", "ToolchainError", "CacheError",
                 "CompilationError"]:
        assert hasattr(cutlass, name), name
    assert hasattr(cutlass.op, "Gemm")
    for name in cuforge.__all__:
        assert hasattr(cuforge, name), name
    assert cutlass.LayoutType.RowMajor != cutlass.LayoutType.ColumnMajor
    assert cutlass.OpcodeClass.TensorOp
    assert cutlass.MathOperation.multiply_add != cutlass.MathOperation.multiply_add_fast_f32
    assert cutlass.KernelScheduleType.TmaWarpSpecializedCooperative
    assert cutlass.KernelScheduleType.TmaWarpSpecializedPingpong
    assert cutlass.EpilogueScheduleType.TmaWarpSpecializedCooperative
    assert cutlass.TileSchedulerType.StreamK != cutlass.TileSchedulerType.Default
    assert {"f16", "bf16", "f32", "tf32", "f64", "s8", "u8", "s32", "e4m3", "e5m2"} <= set(cutlass.DataType.__members__)


def test_error_classes_have_the_right_builtin_bases():
    assert issubclass(cuforge.Error, Exception)
    assert issubclass(cuforge.InvalidArgumentError, cuforge.Error)
    assert issubclass(cuforge.InvalidArgumentError, ValueError)
    assert issubclass(cuforge.DataTypeError, cuforge.Error)
    assert issubclass(cuforge.DataTypeError, TypeError)
    for cls in (cuforge.ToolchainError, cuforge.DeviceError, cuforge.CacheError, cuforge.CompilationError):
        assert issubclass(cls, cuforge.Error), cls
        assert issubclass(cls, RuntimeError), cls
    assert not issubclass(cuforge.DataTypeError, ValueError)
    assert not issubclass(cuforge.InvalidArgumentError, TypeError)


def test_tile_description_fields():
    td = cutlass.TileDescription()
    td.threadblock_shape = [128, 256, 64]
    td.cluster_shape = [2, 1, 1]
    td.stages = 0
    td.kernel_schedule = cutlass.KernelScheduleType.TmaWarpSpecializedCooperative
    td.epilogue_schedule = cutlass.EpilogueScheduleType.TmaWarpSpecializedCooperative
    td.tile_scheduler = cutlass.TileSchedulerType.StreamK
    assert list(td.threadblock_shape) == [128, 256, 64]
    other = cutlass.TileDescription()
    assert not (td == other)
    other.threadblock_shape = [128, 256, 64]
    other.cluster_shape = [2, 1, 1]
    other.kernel_schedule = td.kernel_schedule
    other.epilogue_schedule = td.epilogue_schedule
    other.tile_scheduler = td.tile_scheduler
    assert td == other
    assert "128x256x64" in repr(td) and "streamk" in repr(td)


@pytest.mark.parametrize("field, value, says", [
    ("threadblock_shape", [128, 128], "three integers of 32 bits, got [128, 128]"),
    ("threadblock_shape", [2**40, 128, 64], "three integers of 32 bits"),
    ("cluster_shape", [1.5, 1, 1], "three integers of 32 bits"),
    ("warp_count", "2x2x1", "three integers of 32 bits"),
    ("stages", 2**40, "an integer of 32 bits, got 1099511627776"),
    ("kernel_schedule", "cooperative", "a cuforge.KernelScheduleType, got 'cooperative'"),
    ("epilogue_schedule", "auto", "a cuforge.EpilogueScheduleType"),
    ("tile_scheduler", 3.5, "a cuforge.TileSchedulerType, got 3.5"),
    ("swap_ab", 1, "True or False, got 1"),
])
def test_tile_description_fields_refuse_values_of_the_wrong_kind_by_name(field, value, says):
    td = cutlass.TileDescription()
    before = repr(td)
    with pytest.raises(cuforge.InvalidArgumentError, match=f"^TileDescription.{field}: expected {re.escape(says)}"):
        setattr(td, field, value)
    assert repr(td) == before


# --- Plans -----------------------------------------------------------------------------------------


def plan_summary(plan):
    return (plan.element_A, plan.element_B, plan.element_C, plan.element_D, plan.element_accumulator,
            plan.layout_A, plan.layout_B, plan.layout_C, plan.cc, plan.kernel_cc,
            [repr(t) for t in plan.tile_descriptions()], plan.select(4096, 4096, 4096), plan.select(197, 262, 136))


def test_short_form_equals_per_operand_form():
    short = cutlass.op.Gemm(element=np.float16, layout=RowMajor)
    long = cutlass.op.Gemm(element_A=np.float16, element_B=np.float16, element_C=np.float16, element_D=np.float16,
                           element_accumulator=np.float32, layout_A=RowMajor, layout_B=RowMajor, layout_C=RowMajor)
    assert plan_summary(short) == plan_summary(long)
    assert short.element_A == cuforge.DataType.f16
    assert short.element_accumulator == cuforge.DataType.f32
    assert short.layout_A == RowMajor

    f32_short = cutlass.op.Gemm(element=np.float32, layout=RowMajor)
    f32_long = cutlass.op.Gemm(element_A=np.float32, element_B=np.float32, element_C=np.float32,
                               element_D=np.float32, element_accumulator=np.float32, layout=RowMajor)
    assert plan_summary(f32_short) == plan_summary(f32_long)


def test_a_tensor_s_type_and_layout_come_before_the_generic_ones():
    # The CUTLASS Python interface's order: element_X/layout_X, else the tensor's, else element/layout.
    C = np.zeros((4, 4), np.float32, order="F")
    plan = cutlass.op.Gemm(C=C, D=C.copy(order="F"), element=np.float16, layout=RowMajor)
    assert (plan.element_A, plan.element_C, plan.element_D) == (cuforge.DataType.f16, cuforge.DataType.f32,
                                                                cuforge.DataType.f32)
    assert (plan.layout_A, plan.layout_C) == (RowMajor, cuforge.LayoutType.ColumnMajor)
    explicit = cutlass.op.Gemm(C=C, D=C, element=np.float16, element_C=np.float32, element_D=np.float32,
                               layout=RowMajor, layout_C=RowMajor)
    assert (explicit.element_C, explicit.layout_C) == (cuforge.DataType.f32, RowMajor)
    # An element_X of another type than its tensor X: no run of the plan's own tensors could be (the interface
    # refused any element_X given with a tensor X; this plan was taken, of f16 C and D).
    with pytest.raises(cuforge.DataTypeError, match="^element_C is f16, but the tensor C given with it holds f32"):
        cutlass.op.Gemm(C=C, D=C, element=np.float16, element_C=np.float16, element_D=np.float16, layout=RowMajor)
    # A one-row matrix lies either way: the generic layout decides (a grouped plan's first telling group).
    col = lambda r, c: np.zeros((r, c), np.float16, order="F")  # noqa: E731
    one_row = cutlass.op.Gemm(A=col(1, 64), B=col(64, 64), C=col(1, 64), D=col(1, 64), layout=cuforge.LayoutType.ColumnMajor)
    assert (one_row.layout_A, one_row.layout_C) == (cuforge.LayoutType.ColumnMajor,) * 2
    grouped = cutlass.op.GroupedGemm(A=[col(1, 64), col(64, 64)], B=[col(64, 64)] * 2, C=[col(1, 64), col(64, 64)],
                                     D=[col(1, 64), col(64, 64)], layout=RowMajor)
    assert (grouped.layout_A, grouped.layout_C) == (cuforge.LayoutType.ColumnMajor,) * 2


@pytest.mark.parametrize("spelling", [np.float16, np.dtype("float16"), "float16", "f16", "half", cuforge.DataType.f16])
def test_f16_spellings(spelling):
    plan = cuforge.op.Gemm(element=spelling, layout=RowMajor)
    assert plan.element_A == plan.element_D == cuforge.DataType.f16


@pytest.mark.parametrize("spelling", [np.float32, "float32", "float", "f32", cuforge.DataType.f32])
def test_f32_spellings(spelling):
    plan = cuforge.op.Gemm(element=spelling, layout=RowMajor)
    assert plan.element_A == cuforge.DataType.f32


@pytest.mark.parametrize("spelling", ["bf16", "bfloat16", cuforge.DataType.bf16])
def test_bf16_spellings(spelling):
    plan = cuforge.op.Gemm(element=spelling, layout=RowMajor)
    assert plan.element_A == cuforge.DataType.bf16
    assert "_bf16_bf16_f32_bf16_bf16_" in plan.select(1024, 1024, 1024)


def test_unknown_element_type_is_a_data_type_error():
    with pytest.raises(cuforge.DataTypeError, match="no element type"):
        cuforge.op.Gemm(element="f17", layout=RowMajor)
    with pytest.raises(cuforge.DataTypeError):
        cuforge.op.Gemm(element=np.uint16, layout=RowMajor)
    with pytest.raises(TypeError):  # a DataTypeError is a TypeError
        cuforge.op.Gemm(element=object(), layout=RowMajor)


def test_plans_the_catalog_cannot_build_are_refused():
    with pytest.raises(cuforge.InvalidArgumentError, match="cuforge list"):  # SM80's fp8 kernels: one type, SIMT
        cuforge.op.Gemm(element_A="e4m3", element_B="e5m2", element_C=np.float16, element_D=np.float16,
                        layout=RowMajor, kernel_cc=80)
    with pytest.raises(cuforge.InvalidArgumentError, match="element_accumulator"):
        cuforge.op.Gemm(element="bf16", element_accumulator=np.float16, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="element_A"):
        cuforge.op.Gemm(layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="kernel_cc"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor, kernel_cc=70)
    with pytest.raises(cuforge.DeviceError, match="8.0 or newer"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor, cc=75)



def test_f16_accumulation_is_offered_for_f16():
    plan = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float16, layout=RowMajor)
    assert plan.element_accumulator == cuforge.DataType.f16
    assert "_f16_f16_f16_f16_f16_" in plan.select(1024, 1024, 1024)


def test_tensors_at_construction_supply_types_and_layouts():
    A, B, C, D = operands(64, 32, 48, np.float16, layouts="crr")
    plan = cuforge.op.Gemm(A=A, B=B, C=C, D=D)
    assert plan.element_A == plan.element_D == cuforge.DataType.f16
    assert plan.layout_A == ColumnMajor
    assert plan.layout_B == RowMajor
    assert plan.layout_C == RowMajor
    assert plan.A is A and plan.D is D


def test_first_plan_is_built_in_under_50ms():
    result = run_python("""
        import time
        import numpy as np
        import cuforge
        start = time.perf_counter()
        plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
        first = time.perf_counter() - start
        plan.select(4096, 4096, 4096)
        print(f"FIRST_PLAN_MS={first * 1e3:.2f}")
    """)
    assert result.returncode == 0, result.stderr
    ms = float(re.search(r"FIRST_PLAN_MS=([0-9.]+)", result.stdout).group(1))
    assert ms < 50, f"first plan took {ms:.1f} ms"


def test_properties():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    assert plan.opclass == cuforge.OpcodeClass.TensorOp
    assert plan.math_operation == cuforge.MathOperation.multiply_add
    assert plan.kernel_cc in (80, 90)
    sm80 = cuforge.op.Gemm(element=np.float16, layout=RowMajor, kernel_cc=80)
    assert sm80.kernel_cc == 80
    assert sm80.select(4096, 4096, 4096).startswith("cuforge_sm80_")


@no_gpu
def test_without_a_gpu_plans_target_sm90():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    assert plan.cc == 90
    assert plan.kernel_cc == 90
    assert plan.select(4096, 4096, 4096).startswith("cuforge_sm90_")


# --- Tile descriptions -------------------------------------------------------------------------------


def tile_of(name: str) -> str:
    return re.search(r"_(\d+x\d+x\d+)_[cw]", name).group(1)


def test_tile_descriptions_can_be_pinned():
    plan = cuforge.op.Gemm(element="bf16", layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor)
    tiles = plan.tile_descriptions()
    assert tiles and all(isinstance(t, cuforge.TileDescription) for t in tiles)
    assert plan.tile_description is None
    chosen = tiles[-1]
    plan.tile_description = chosen
    assert plan.tile_description == chosen
    shape = "x".join(str(v) for v in chosen.threadblock_shape)
    for problem in [(4096, 4096, 4096), (16, 4096, 4096), (264, 200, 136)]:
        assert tile_of(plan.select(*problem)) == shape
    plan.tile_description = None
    assert plan.tile_description is None


def test_tile_description_from_a_dict():
    plan = cuforge.op.Gemm(element="bf16", layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor)
    plan.tile_description = {
        "threadblock_shape": (128, 128, 64),
        "cluster_shape": [1, 2, 1],
        "kernel_schedule": cuforge.KernelScheduleType.TmaWarpSpecializedCooperative,
        "epilogue_schedule": cuforge.EpilogueScheduleType.TmaWarpSpecializedCooperative,
        "tile_scheduler": cuforge.TileSchedulerType.StreamK,
    }
    name = plan.select(4096, 4096, 4096)
    assert "_128x128x64_c1x2x1_" in name and "_coop_tmacoop_streamk_" in name


def test_impossible_tile_descriptions_say_why():
    plan = cuforge.op.Gemm(element="bf16", layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor)
    td = cuforge.TileDescription()
    td.threadblock_shape = [64, 128, 64]
    td.kernel_schedule = cuforge.KernelScheduleType.TmaWarpSpecializedPingpong
    td.epilogue_schedule = cuforge.EpilogueScheduleType.TmaWarpSpecialized
    td.tile_scheduler = cuforge.TileSchedulerType.StreamK
    with pytest.raises(cuforge.InvalidArgumentError, match="stream-K"):
        plan.tile_description = td
    assert plan.tile_description is None, "a refused description must not stay pinned"

    plan.tile_description = {  # a shape none of the listed tiles has: refused when the plan next builds or runs
        "threadblock_shape": [256, 256, 64],
        "kernel_schedule": cuforge.KernelScheduleType.TmaWarpSpecializedPingpong,
        "epilogue_schedule": cuforge.EpilogueScheduleType.TmaWarpSpecialized,
    }
    with pytest.raises(cuforge.InvalidArgumentError, match="accumulator registers") as info:
        plan.construct()
    assert "256x256x64" in str(info.value)
    assert "tile_descriptions()" in str(info.value)
    plan.tile_description = None

    with pytest.raises(cuforge.InvalidArgumentError, match="unknown key 'warps'"):
        plan.tile_description = {"warps": [2, 2, 1]}
    # SM90 kernels run their schedule's warpgroups: a warp count is not read there, but none is below one.
    with pytest.raises(cuforge.InvalidArgumentError, match="warp_count 0x2x1: warps are counted from 1"):
        plan.tile_description = {"threadblock_shape": [128, 128, 64], "warp_count": [0, 2, 1]}
    plan.tile_description = {"threadblock_shape": [128, 128, 64], "warp_count": [4, 1, 1]}  # the interface's SM90 own
    plan.tile_description = None
    with pytest.raises(cuforge.InvalidArgumentError, match="TileDescription or a dict"):
        plan.tile_description = 128
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        coop64 = cuforge.TileDescription()
        coop64.threadblock_shape = [64, 128, 64]  # a listed shape: refused at once, for its schedule
        coop64.kernel_schedule = cuforge.KernelScheduleType.TmaWarpSpecializedCooperative
        coop64.epilogue_schedule = cuforge.EpilogueScheduleType.TmaWarpSpecializedCooperative
        plan.tile_description = coop64


# --- Selection, catalog, emission -----------------------------------------------------------------


def test_list_gemms():
    sm90 = cuforge.list_gemms(90)
    sm80 = cuforge.list_gemms(80)
    assert len(sm90) == SM90_KERNELS
    assert len(sm80) == SM80_KERNELS
    assert len(cuforge.list_gemms()) == SM90_KERNELS + SM80_KERNELS
    assert len(set(sm90)) == len(sm90)
    sm90_kinds = tuple(f"cuforge_sm90_{kind}_" for kind in ("gemm", "grouped", "fprop", "dgrad", "wgrad"))
    assert all(n.startswith(sm90_kinds) for n in sm90)
    assert len(cuforge.list_gemms(90, kind=cuforge.KernelKind.Gemm)) == 5293
    pingpong = cuforge.list_gemms(glob="*_pingpong_*")
    assert pingpong and all("_pingpong_" in n and n.startswith("cuforge_sm90_") for n in pingpong)
    assert cuforge.list_gemms(glob="nothing*") == []
    with pytest.raises(cuforge.InvalidArgumentError, match="sm80.*sm90"):
        cuforge.list_gemms(70)
    assert cuforge.list_gemms(90, kind="Grouped") == cuforge.list_gemms(90, kind=cuforge.KernelKind.Grouped)
    for args, says in (((2**40,), "^arch: 1099511627776 is not a compute capability"),
                       (("90",), "^arch: expected an int"), ((90, 5), "^glob: expected a shell pattern"),
                       ((90, "*\0junk"), "^filter: a shell pattern on kernel names holds no NUL"),
                       ((90, "", "conv"), "^kind: expected a cuforge.KernelKind")):
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            cuforge.list_gemms(*args)


def test_build_takes_a_name_or_a_list_of_names():
    for names in (None, [5], 5, ["cuforge_sm90", None]):
        with pytest.raises(cuforge.InvalidArgumentError, match="^names: expected a kernel name or a list of them"):
            cuforge.build(names)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^names: .* \(strings\), got bytes$"):  # said "got int"
        cuforge.build(b"cuforge_sm90")
    with pytest.raises(cuforge.InvalidArgumentError, match="^'nope' is not a cuforge kernel name"):
        cuforge.build("nope")  # one name, not its letters


def test_a_class_no_run_can_have_is_refused_where_it_is_made():
    """select() refuses what every run's check refuses: a bias with a column-major D, a bias for wgrad."""
    says = "^C: a bias vector C needs a row-major D"
    with pytest.raises(cuforge.InvalidArgumentError, match=says):
        cuforge.op.Gemm(element=np.float16, layout_A=RowMajor, layout_B=RowMajor, layout_C=ColumnMajor).select(
            256, 256, 256, bias=True)
    with pytest.raises(cuforge.InvalidArgumentError, match=says):
        cuforge.op.GroupedGemm(element=np.float16, layout_A=RowMajor, layout_B=RowMajor,
                               layout_C=ColumnMajor).select(8, 256, 256, 256, bias=True)
    with pytest.raises(cuforge.InvalidArgumentError, match="^bias: a bias is one value per output channel"):
        cuforge.op.Conv2d(kind="wgrad", element=np.float16).select(32, 28, 28, 64, 64, 3, 3, padding=(1, 1),
                                                                   bias=True)


def test_plans_refuse_what_is_not_a_compute_capability_or_an_argument():
    for option in ("cc", "kernel_cc"):
        with pytest.raises(cuforge.InvalidArgumentError, match=f"^{option}: 1099511627776 is not a compute capab"):
            cuforge.op.Gemm(element=np.float16, layout=RowMajor, **{option: 2**40})
    with pytest.raises(TypeError, match="unexpected keyword argument 'elemnt'"):
        cuforge.op.Gemm(elemnt=np.float16, layout=RowMajor)


def test_plans_take_a_device_ordinal():
    """cuforge.ops makes one plan per device (device=A.device.index)."""
    for cls in (cuforge.op.Gemm, cuforge.op.GroupedGemm):
        assert cls(element=np.float16, layout=RowMajor, device=0)._plan.device == 0
    for device, says in ((-1, "^device: expected 0 or more, got -1"), (True, "^device: expected an integer"),
                         (2**40, "^device: 1099511627776 is not a CUDA device ordinal")):
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            cuforge.op.Gemm(element=np.float16, layout=RowMajor, device=device)


def test_select_returns_catalog_names_that_fit():
    catalog = set(cuforge.list_gemms())
    plan = cuforge.op.Gemm(element="bf16", layout=RowMajor)
    for problem in [(4096, 4096, 4096), (16, 4096, 4096), (1, 256, 512), (8192, 1024, 8192), (264, 200, 136)]:
        assert plan.select(*problem) in catalog, problem
    # ldb = ldd = 262: 4-byte aligned rows, which only SM80 kernels of alignment 2 can load.
    name = plan.select(197, 262, 136)
    assert name in catalog
    assert name.startswith("cuforge_sm80_") and name.endswith("_a2x2x2"), name
    assert plan.select(256, 256, 256).startswith("cuforge_sm90_")
    assert plan.select(256, 256, 256).endswith("_a8x8x8")


def test_select_column_major_output():
    plan = cuforge.op.Gemm(element=np.float16, layout_A=RowMajor, layout_B=ColumnMajor, layout_C=ColumnMajor)
    name = plan.select(4096, 1024, 512)
    assert "_rcr_" in name, "a column-major D runs as the transposed problem D^T = B^T A^T"


def test_emit():
    name = cuforge.list_gemms(90, glob="*_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_c1x1x1_*_coop_tmacoop_streamk_*")[0]
    source = cuforge.emit.kernel_source(name)
    assert name in source
    assert "cutlass::bfloat16_t" in source
    assert "cutlass::gemm::StreamKScheduler" in source
    assert "cuforge_gemm_run" in source
    sm80 = cuforge.emit.kernel_source(cuforge.list_gemms(80)[0])
    assert "cutlass::gemm::GemmShape<" in sm80
    with pytest.raises(cuforge.InvalidArgumentError, match="not a cuforge kernel name"):
        cuforge.emit.kernel_source("not_a_kernel")
    invalid = name.replace("_c1x1x1_", "_c1x1x2_")
    with pytest.raises(cuforge.InvalidArgumentError, match="cannot be built"):
        cuforge.emit.kernel_source(invalid)


# --- Without a GPU -------------------------------------------------------------------------------


@no_gpu
def test_device_count_is_zero():
    assert cuforge.device_count() == 0


@no_gpu
def test_numpy_run_says_no_gpu_was_found():
    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    A, B, C, D = [np.ones((128, 128), dtype=np.float16) for _ in range(4)]
    before = D.copy()
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(A, B, C, D)
    assert np.array_equal(D, before)


@no_gpu
def test_device_arrays_that_pass_validation_stop_at_the_device():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(*operands(64, 32, 48))
    # Tensors given at construction are used by run().
    A, B, C, D = operands(64, 32, 48)
    with pytest.raises(cuforge.DeviceError):
        cuforge.op.Gemm(A=A, B=B, C=C, D=D).run()
    with pytest.raises(cuforge.DeviceError):
        plan.run(A, B, None, D, beta=0.0, sync=False)


def test_operands_of_unknown_kinds_are_refused():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A, B, C, D = operands(64, 32, 48)
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: expected a PyTorch tensor, a CuPy or JAX array .* got list$"):
        plan.run([[1.0]], B, C, D)
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: .*got str"):
        plan.run(A, B, C, "D")
    with pytest.raises(cuforge.InvalidArgumentError, match="stream"):
        plan.run(A, B, C, D, stream="default")


@pytest.mark.parametrize("missing", ["A", "B", "D"])
def test_missing_operands_are_named(missing):
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    ops = dict(zip("ABCD", operands(64, 32, 48)))
    ops[missing] = None
    with pytest.raises(cuforge.InvalidArgumentError, match=f"^{missing}: no (output )?tensor was given"):
        plan.run(**ops, beta=1.0)


def test_scalars_must_be_real_numbers():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A, B, C, D = operands(64, 32, 48)
    with pytest.raises(cuforge.InvalidArgumentError, match="^alpha: expected a real number, got 'two'"):
        plan.run(A, B, C, D, alpha="two")
    with pytest.raises(cuforge.InvalidArgumentError, match="^beta: expected a real number"):
        plan.run(A, B, C, D, beta=1j)


def test_strided_numpy_views_are_refused_before_copying():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A = np.ones((64, 96), np.float16)[:, ::2]
    B, C, D = [np.ones(s, np.float16) for s in [(48, 32), (64, 32), (64, 32)]]
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: expected a row-major matrix"):
        plan.run(A, B, C, D)


def test_numpy_operand_of_the_wrong_dtype_is_refused_before_the_device_is_used():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A = np.ones((64, 48), np.float32)
    B, C, D = [np.ones(s, np.float16) for s in [(48, 32), (64, 32), (64, 32)]]
    with pytest.raises(cuforge.DataTypeError, match="^A: "):
        plan.run(A, B, C, D)
    with pytest.raises(cuforge.DataTypeError, match="^A: cuforge has no element type for dtype.'O'."):
        plan.run(A.astype(object), B, C, D)


def test_a_read_only_numpy_output_is_refused_before_the_device_is_used(tmp_path):
    """The result is copied back into a NumPy D: a read-only one (a read-only memory map: the copy would
    fault) is refused, in the list form too, naming the group."""
    A, B, D = [np.ones(s, np.float16) for s in [(64, 48), (48, 32), (64, 32)]]
    D.tofile(tmp_path / "d")
    mapped = np.memmap(tmp_path / "d", dtype=np.float16, mode="r", shape=D.shape)
    says = "the NumPy array is read-only, and the result would be copied back into it"
    with pytest.raises(cuforge.InvalidArgumentError, match=f"^D: {says}"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor).run(A, B, None, mapped)
    with pytest.raises(cuforge.InvalidArgumentError, match=rf"^D\[1\]: {says}"):
        cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor).run([A, A], [B, B], None, [D, mapped])
    assert not mapped.flags.writeable


def _bias_holding_plans():
    """A plan of each operation holding its tensors with C a bias (host arrays: only their shapes are read)."""
    f16 = np.float16
    gemm = cuforge.op.Gemm(A=np.ones((64, 32), f16), B=np.ones((32, 16), f16), C=np.ones(16, f16),
                           D=np.ones((64, 16), f16))
    grouped = cuforge.op.GroupedGemm(A=[np.ones((1, 32), f16), np.ones((64, 32), f16)], B=[np.ones((32, 16), f16)] * 2,
                                     C=[np.ones((1, 16), f16)] * 2, D=[np.ones((1, 16), f16), np.ones((64, 16), f16)])
    conv = cuforge.op.Conv2d(kind="fprop", A=np.ones((2, 8, 8, 16), f16), B=np.ones((32, 3, 3, 16), f16),
                             C=np.ones(32, f16), D=np.ones((2, 6, 6, 32), f16), element_accumulator=np.float32)
    return gemm, grouped, conv


def test_construct_takes_the_bias_kernel_a_plan_holding_a_bias_c_runs():
    gemm, _, conv = _bias_holding_plans()
    for plan in (gemm, conv):
        assert plan.construct().name.endswith("_bias"), plan.construct().name
        assert not plan.construct(bias=False).name.endswith("_bias")
    # A 1 x N C is D-shaped where A has one row; a matrix C is never a bias.
    one_row = cuforge.op.Gemm(A=np.ones((1, 32), np.float16), B=np.ones((32, 16), np.float16),
                              C=np.ones((1, 16), np.float16), D=np.ones((1, 16), np.float16))
    assert not one_row.construct().name.endswith("_bias")
    one_row.C = np.ones(16, np.float16)  # a vector C too (a bias by the Python rule, not the core's run)
    assert not one_row.construct().name.endswith("_bias")
    assert cuforge.op.Gemm(element=np.float16, layout=RowMajor).construct(M=64, N=16, K=32, bias=True).name.endswith(
        "_bias")
    with pytest.raises(cuforge.InvalidArgumentError, match="^bias: expected True or False"):
        gemm.construct(bias="yes")


@no_gpu  # a fake toolkit's library (an ELF header alone): on a GPU, compile() would load it
def test_compile_builds_the_bias_kernel_a_plan_holding_a_bias_c_runs(tmp_path):
    """So that the first run after compile() needs no second build (a fake toolkit builds at once)."""
    from test_faults import fake_toolkit

    r = run_python(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_api import _bias_holding_plans
        for plan in _bias_holding_plans():
            print(plan.compile().name.endswith("_bias"), plan.compile(bias=False).name.endswith("_bias"))
    """, CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["True False"] * 3, r.stdout


@no_gpu  # a fake toolkit's library (an ELF header alone): on a GPU, compile() would load it
def test_compile_builds_the_class_of_the_plans_own_tensors(tmp_path):
    """A batch over one B folds into the rows of one GEMM when it runs: compile() builds that class (it took
    the shapes' last two dimensions, 16 rows: a small-M kernel). A fake toolkit builds at once."""
    from test_faults import fake_toolkit

    r = run_python("""
        import numpy as np, cuforge
        f16 = np.float16
        plan = cuforge.op.Gemm(A=np.ones((8, 16, 4096), f16), B=np.ones((4096, 4096), f16),
                               D=np.zeros((8, 16, 4096), f16), element_accumulator=np.float32)
        # Both chosen before compile(): after it, select() answers with the kernel compile() built.
        run_class, rows_of_one = plan.select(128, 4096, 4096), plan.select(16, 4096, 4096)
        print(plan.compile().name == run_class, rows_of_one == run_class)
    """, CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False"], r.stdout


@no_gpu  # a fake toolkit's library (an ELF header alone): on a GPU, compile() would load it
def test_info_logging_shows_each_build_and_its_time(tmp_path):
    """set_log_level("INFO") shows what nvcc builds (a fake toolkit builds at once); a second compile of
    the kernel, found in the cache, logs no build."""
    from test_faults import fake_toolkit

    r = run_python("""
        import logging, numpy as np, cuforge
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(message)s")
        cuforge.set_log_level("INFO")
        plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
        name = plan.compile().name
        plan.compile()
        print("KERNEL", name)
    """, CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    name = r.stdout.split("KERNEL ")[1].strip()
    assert r.stderr.count(f"INFO building {name} for sm90 (nvcc)") == 1, r.stderr
    assert re.search(rf"INFO built {name} in \d+\.\d s", r.stderr), r.stderr
