"""The Python front on the CPU: seed-compatible names, plan construction, tile descriptions,
selection, the catalog and emission, and what happens without a GPU. Nothing here compiles a
kernel (the C++ suite compiles the two the CI budget allows)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cuforge
import cuforge as cutlass  # the seed's spelling must work unchanged
from fake_arrays import col_major, operands, row_major

RowMajor, ColumnMajor = cuforge.LayoutType.RowMajor, cuforge.LayoutType.ColumnMajor

no_gpu = pytest.mark.skipif(cuforge.device_count() > 0, reason="checks the behaviour of a machine without a GPU")

# The catalog's size per family (the C++ suite asserts the same numbers).
SM90_KERNELS, SM80_KERNELS = 1575, 1980


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter (cuforge finds its toolchain and cache once per process)."""
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, timeout=120)


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
    with pytest.raises(cuforge.InvalidArgumentError, match="cuforge list"):
        cuforge.op.Gemm(element=np.int8, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="element_accumulator"):
        cuforge.op.Gemm(element="bf16", element_accumulator=np.float16, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="element_A"):
        cuforge.op.Gemm(layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="kernel_cc"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor, kernel_cc=70)
    with pytest.raises(cuforge.DeviceError, match="8.0 or newer"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor, cc=75)


def test_plans_for_type_pairs_the_catalog_lacks_say_so():
    with pytest.raises(cuforge.InvalidArgumentError, match=r"no sm\d+ kernel computes A e4m3 x B s8.*cuforge list"):
        cuforge.op.Gemm(element_A="e4m3", element_B=np.int8, element_C=np.float16, element_D=np.float16,
                        layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="no sm90 kernel computes A f64 x B f64"):
        cuforge.op.Gemm(element=np.float64, layout=RowMajor, kernel_cc=90)
    with pytest.raises(cuforge.InvalidArgumentError, match="opcode class simt"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor, opclass=cuforge.OpcodeClass.Simt)
    # int8 kernels read A row-major and B column-major only (K-major 8-bit operands).
    with pytest.raises(cuforge.InvalidArgumentError, match="A s8 x B s8 with s32 accumulation"):
        cuforge.op.Gemm(element=np.int8, layout=RowMajor)


RCR = dict(layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor)


def test_int8_plans():
    plan = cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32, **RCR)
    assert plan.element_accumulator == cuforge.DataType.s32, "int8 inputs accumulate in s32 by default"
    assert "_tensorop_mma_s8_s8_s32_s32_s32_rcr_" in plan.select(4096, 4096, 4096)
    assert plan.select(4096, 4096, 4096).startswith("cuforge_sm90_")
    sm80 = cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32,
                           kernel_cc=80, **RCR)
    assert "cuforge_sm80_gemm_tensorop_sat_s8_s8_s32_s32_s32_rcr_" in sm80.select(4096, 4096, 4096)
    # ldd = 262 int32s: 8-byte rows, which SM80 kernels of C alignment 2 (A and B 8) take.
    odd = plan.select(256, 262, 512)
    assert odd.startswith("cuforge_sm80_") and odd.endswith("_a8x8x2"), odd
    s8 = cuforge.op.Gemm(element=np.int8, **RCR)
    assert "_s8_s8_s32_s8_s8_rcr_" in s8.select(1024, 1024, 1024)
    s8.activation = "gelu"  # s8 outputs are computed in f32: every activation applies
    assert s8.select(1024, 1024, 1024).endswith("_gelu")
    # Column-major D: the transposed problem, still K-major operands.
    t = cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32,
                        layout_A=RowMajor, layout_B=ColumnMajor, layout_C=ColumnMajor)
    assert "_s8_s8_s32_s32_s32_rcr_" in t.select(512, 256, 128)


def test_int32_outputs_take_identity_and_relu_only():
    plan = cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32, **RCR)
    plan.activation = "relu"
    assert plan.select(1024, 1024, 1024, bias=True).endswith("_relu_bias")
    assert [f.name for f in plan.activations()] == ["identity", "relu"]
    with pytest.raises(cuforge.InvalidArgumentError, match="activation gelu cannot be fused.*computed in s32"):
        plan.activation = "gelu"
    assert plan.activation is cuforge.epilogue.relu, "a refused activation leaves the plan's"


@no_gpu
def test_int32_outputs_take_whole_alpha_and_beta():
    plan = cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32, **RCR)
    A = row_major(64, 48, np.int8, "A")
    B = col_major(48, 32, np.int8, "B")
    C, D = (row_major(64, 32, np.int32, name) for name in "CD")
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^alpha: s32 outputs are computed in int32: .* got 0.5"):
        plan.run(A, B, C, D, alpha=0.5)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^beta: .*whole number, got 10000000000"):
        plan.run(A, B, C, D, beta=1e10)
    with pytest.raises(cuforge.DeviceError):  # whole numbers pass the boundary
        plan.run(A, B, C, D, alpha=2, beta=-1)
    host = [np.zeros((64, 48), np.int8), np.zeros((32, 48), np.int8).T] + [np.zeros((64, 32), np.int32)] * 2
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^alpha: s32 outputs"):  # before any copy
        plan.run(host[0], host[1], host[2], host[3].copy(), alpha=0.5)


@pytest.mark.parametrize("a", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("b", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("out", ["bf16", "f16", "f32"])
def test_fp8_plans(a, b, out):
    plan = cuforge.op.Gemm(element_A=a, element_B=b, element_C=out, element_D=out, **RCR)
    assert plan.element_accumulator == cuforge.DataType.f32
    short = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
    name = plan.select(4096, 4096, 4096)
    assert name.startswith("cuforge_sm90_gemm_tensorop_mma_") and f"_{short[a]}_{short[b]}_f32_{out}_{out}_rcr_" in name


def test_f64_plans_run_on_sm80_tensor_cores():
    plan = cuforge.op.Gemm(element=np.float64, layout=RowMajor)
    assert plan.element_accumulator == cuforge.DataType.f64
    assert plan.kernel_cc == 80, "no SM90 f64 kernels: the SM80 family runs them"
    assert "cuforge_sm80_gemm_tensorop_mma_f64_f64_f64_f64_f64_rrr_" in plan.select(1024, 1024, 1024)
    assert plan.select(1023, 1021, 1019).endswith("_a1x1x1")


@pytest.mark.parametrize("element", [np.float32, np.float64])
def test_simt_plans(element):
    name = {np.float32: "f32", np.float64: "f64"}[element]
    default = cuforge.op.Gemm(element=element, layout=RowMajor)
    assert default.opclass == cuforge.OpcodeClass.TensorOp
    assert "_tensorop_" in default.select(1024, 1024, 1024), "tensor cores unless SIMT is asked for"
    assert all(t.threadblock_shape[2] != 8 or element == np.float64 for t in default.tile_descriptions())

    simt = cuforge.op.Gemm(element=element, layout=RowMajor, opclass=cuforge.OpcodeClass.Simt)
    assert simt.opclass == cuforge.OpcodeClass.Simt
    assert simt.kernel_cc == 80
    assert simt.select(1024, 1024, 1024).startswith(f"cuforge_sm80_gemm_simt_mma_{name}_")
    assert all(t.threadblock_shape[2] == 8 for t in simt.tile_descriptions())

    # Setting the opcode class chooses among that class's kernels; settings carry over.
    default.activation = "relu"
    default.opclass = cuforge.OpcodeClass.Simt
    assert default.opclass == cuforge.OpcodeClass.Simt
    chosen = default.select(1024, 1024, 1024)
    assert "_simt_" in chosen and chosen.endswith("_relu")
    default.opclass = cuforge.OpcodeClass.TensorOp
    assert "_tensorop_" in default.select(1024, 1024, 1024)


def test_setting_an_opclass_without_kernels_leaves_the_plan_as_it_was():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    before = plan.select(1024, 1024, 1024)
    with pytest.raises(cuforge.InvalidArgumentError, match="opcode class simt"):
        plan.opclass = cuforge.OpcodeClass.Simt
    assert plan.opclass == cuforge.OpcodeClass.TensorOp
    assert plan.select(1024, 1024, 1024) == before
    with pytest.raises(cuforge.InvalidArgumentError, match="OpcodeClass"):
        plan.opclass = "simt"


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

    with pytest.raises(cuforge.InvalidArgumentError, match="accumulator registers") as info:
        plan.tile_description = {
            "threadblock_shape": [256, 256, 64],
            "kernel_schedule": cuforge.KernelScheduleType.TmaWarpSpecializedPingpong,
            "epilogue_schedule": cuforge.EpilogueScheduleType.TmaWarpSpecialized,
        }
    assert "256x256x64" in str(info.value)
    assert "tile_descriptions()" in str(info.value)

    with pytest.raises(cuforge.InvalidArgumentError, match="unknown key 'warps'"):
        plan.tile_description = {"warps": [2, 2, 1]}
    with pytest.raises(cuforge.InvalidArgumentError, match="TileDescription or a dict"):
        plan.tile_description = 128
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        coop64 = cuforge.TileDescription()
        coop64.threadblock_shape = [64, 128, 64]
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
    assert all(n.startswith("cuforge_sm90_gemm_") for n in sm90)
    pingpong = cuforge.list_gemms(glob="*_pingpong_*")
    assert pingpong and all("_pingpong_" in n and n.startswith("cuforge_sm90_") for n in pingpong)
    assert cuforge.list_gemms(glob="nothing*") == []
    assert cuforge.list_gemms(70) == []


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
    source = cuforge.emit(name)
    assert name in source
    assert "cutlass::bfloat16_t" in source
    assert "cutlass::gemm::StreamKScheduler" in source
    assert "cuforge_gemm_run" in source
    sm80 = cuforge.emit(cuforge.list_gemms(80)[0])
    assert "cutlass::gemm::GemmShape<" in sm80
    with pytest.raises(cuforge.InvalidArgumentError, match="not a cuforge GEMM kernel name"):
        cuforge.emit("not_a_kernel")
    invalid = name.replace("_c1x1x1_", "_c1x1x2_")
    with pytest.raises(cuforge.InvalidArgumentError, match="cannot emit"):
        cuforge.emit(invalid)


# --- Toolchain and cache, each in a fresh process ------------------------------------------------


def test_cache_dir_follows_cuforge_cache_dir(tmp_path):
    result = run_python("import cuforge; print('CACHE=' + cuforge.cache_dir())", CUFORGE_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"CACHE={tmp_path}/v1" in result.stdout


def test_missing_cutlass_is_reported_when_compiling_not_at_import(tmp_path):
    result = run_python("""
        import numpy as np
        import cuforge
        plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
        print("IMPORTED")
        try:
            plan.compile(256, 256, 256)
        except cuforge.ToolchainError as e:
            print("TOOLCHAIN_ERROR=" + str(e).replace("\\n", " "))
    """, CUTLASS_PATH=str(tmp_path / "nowhere"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    assert "IMPORTED" in result.stdout
    error = re.search(r"TOOLCHAIN_ERROR=(.*)", result.stdout).group(1)
    assert "CUTLASS_PATH" in error and "include/cutlass/version.h" in error
    assert not (tmp_path / "cache" / "v1" / "kernels").exists() or not any((tmp_path / "cache" / "v1" / "kernels").iterdir())


def test_missing_nvcc_is_a_toolchain_error(tmp_path):
    result = run_python("""
        import cuforge
        try:
            cuforge.toolchain()
        except cuforge.ToolchainError as e:
            print("TOOLCHAIN_ERROR=" + str(e).replace("\\n", " "))
    """, CUDA_INSTALL_PATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    error = re.search(r"TOOLCHAIN_ERROR=(.*)", result.stdout).group(1)
    assert "CUDA_INSTALL_PATH" in error and "bin/nvcc" in error


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
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: expected a PyTorch tensor, a CuPy array or a NumPy array, got list"):
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


def test_activation_accepts_a_function_a_name_or_a_pair():
    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    assert plan.activation is cutlass.epilogue.identity
    plan.activation = cutlass.epilogue.relu
    assert plan.activation is cutlass.epilogue.relu
    assert plan.select(4096, 4096, 4096).endswith("_relu")
    plan.activation = "gelu"
    assert plan.activation is cutlass.epilogue.gelu
    plan.activation = (cutlass.epilogue.leaky_relu, 0.2)
    assert plan._plan.activation_argument == 0.2
    plan.activation = "leaky_relu"
    assert plan._plan.activation_argument == 0.01, "torch's default slope"
    assert [f.name for f in plan.activations()] == [
        "identity", "relu", "leaky_relu", "tanh", "sigmoid", "silu", "hardswish", "gelu"]
    with pytest.raises(cuforge.InvalidArgumentError, match="unknown 'softmax'"):
        plan.activation = "softmax"
    with pytest.raises(cuforge.InvalidArgumentError, match="relu takes no argument"):
        plan.activation = (cutlass.epilogue.relu, 0.5)
    with pytest.raises(cuforge.InvalidArgumentError, match="expected one of cuforge.epilogue"):
        plan.activation = np.tanh


def test_bias_rows_select_a_bias_kernel():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    assert plan.select(4096, 4096, 4096, bias=True).endswith("_bias")


def test_swizzling_functors():
    sm80 = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, kernel_cc=80)
    assert sm80.swizzling_functor is None
    assert set(sm80.swizzling_functors()) == {
        cutlass.swizzle.IdentitySwizzle1, cutlass.swizzle.IdentitySwizzle2, cutlass.swizzle.IdentitySwizzle4,
        cutlass.swizzle.IdentitySwizzle8, cutlass.swizzle.HorizontalSwizzle, cutlass.swizzle.ThreadblockSwizzleStreamK}
    sm80.swizzling_functor = cutlass.swizzle.ThreadblockSwizzleStreamK
    assert "_streamk_" in sm80.select(4096, 4096, 4096)
    sm90 = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    assert sm90.swizzling_functors() == [cutlass.swizzle.IdentitySwizzle8, cutlass.swizzle.ThreadblockSwizzleStreamK]
    with pytest.raises(cuforge.InvalidArgumentError, match="CUTLASS 2.x"):
        sm90.swizzling_functor = cutlass.swizzle.HorizontalSwizzle


def test_split_k_and_decompositions():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    assert plan.decomposition == cuforge.Decomposition.Heuristic and plan.split_k_slices == 1
    plan.split_k_slices = 4
    assert plan.decomposition == cuforge.Decomposition.SplitK
    assert "_streamk_" in plan.select(256, 512, 32768)
    plan.decomposition = cuforge.Decomposition.DataParallel
    assert plan.split_k_slices == 1
    assert "_streamk_" not in plan.select(256, 512, 32768)
    with pytest.raises(cuforge.InvalidArgumentError, match="2 or more slices"):
        plan.decomposition = cuforge.Decomposition.SplitK
