"""Plans of every data-type family on the CPU: int8 into s32 or s8, fp8 pairings, f64 tensor ops,
SIMT f32/f64, what the catalog lacks, and plan.opclass."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import cuforge
from fake_arrays import col_major, no_gpu, row_major

RowMajor, ColumnMajor = cuforge.LayoutType.RowMajor, cuforge.LayoutType.ColumnMajor


def test_plans_for_type_pairs_the_catalog_lacks_say_so():
    with pytest.raises(cuforge.InvalidArgumentError, match=r"no sm80 GEMM kernel \(nor any sm90 one\) computes A e4m3 x B s8.*cuforge list"):
        cuforge.op.Gemm(element_A="e4m3", element_B=np.int8, element_C=np.float16, element_D=np.float16,
                        layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="no sm90 GEMM kernel computes A f64 x B f64"):
        cuforge.op.Gemm(element=np.float64, layout=RowMajor, kernel_cc=90)
    with pytest.raises(cuforge.InvalidArgumentError, match="opcode class simt"):
        cuforge.op.Gemm(element="bf16", layout=RowMajor, opclass=cuforge.OpcodeClass.Simt)
    # int8's tensor-op kernels read A row-major and B column-major only (K-major 8-bit operands); in other
    # layouts a plan runs SIMT kernels unless it asks for the tensor cores (test_api.py).
    TensorOp = cuforge.OpcodeClass.TensorOp
    with pytest.raises(cuforge.InvalidArgumentError, match=r"A s8 x B s8 with s32 accumulation into C s8 / D s8, opcode "
                                                           r"class tensorop in these layouts \(its kernels take A, B, C "
                                                           r"as rcr\)"):
        cuforge.op.Gemm(element=np.int8, layout=RowMajor, opclass=TensorOp)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"in these layouts \(its kernels take A, B, C as rcr\)"):
        cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32, layout=RowMajor,
                        opclass=TensorOp)


RCR = dict(layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor)


def test_layouts_the_tensor_cores_do_not_take_run_simt_kernels_and_say_so(caplog):
    # As in the CUTLASS Python interface: int8 with a row-major B has SIMT kernels only (mma.sync reads 8-bit
    # operands K-major), which the plan runs, warning that they are far slower.
    with caplog.at_level("WARNING", logger="cuforge"):
        plan = cuforge.op.Gemm(element=np.int8, layout=RowMajor, cc=80)
    assert "runs SIMT kernels on the CUDA cores, far slower" in caplog.text
    assert plan.opclass == cuforge.OpcodeClass.Simt
    assert "_sm80_gemm_simt_mma_s8_s8_s32_s8_s8_rrr_" in plan.select(64, 64, 64)
    with pytest.raises(cuforge.InvalidArgumentError, match="take A, B, C as rcr"):
        plan.opclass = cuforge.OpcodeClass.TensorOp
    assert plan.opclass == cuforge.OpcodeClass.Simt  # the refused setting changed nothing
    caplog.clear()
    with caplog.at_level("WARNING", logger="cuforge"):
        asked = cuforge.op.Gemm(element=np.int8, layout=RowMajor, cc=80, opclass=cuforge.OpcodeClass.Simt)
        k_major = cuforge.op.Gemm(element=np.int8, layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor, cc=80)
    assert caplog.text == ""
    assert asked.opclass == cuforge.OpcodeClass.Simt
    assert k_major.opclass == cuforge.OpcodeClass.TensorOp
    # A math operation the tensor cores lack for the types (SM80's int8 mma.sync saturates) falls back too, said
    # once, as its cause; a setting that keeps the plan on SIMT says nothing more.
    with caplog.at_level("WARNING", logger="cuforge"):
        k_major.math_operation = cuforge.MathOperation.multiply_add
        k_major.activation = "relu"
    assert caplog.text.count("runs SIMT kernels") == 1 and "with math mma" in caplog.text
    assert k_major.opclass == cuforge.OpcodeClass.Simt
    # An SM90 plan's operands TMA cannot load fall back to SM80's tensor-op kernels only, never to SIMT ones.
    sm90 = cuforge.op.Gemm(element=np.int8, layout_A=RowMajor, layout_B=ColumnMajor, layout_C=RowMajor, cc=90,
                           math_operation=cuforge.MathOperation.multiply_add)
    with pytest.raises(cuforge.InvalidArgumentError, match="alignment"):
        sm90.select(64, 64, 72)
    # Vectors say no layout: an 8-bit plan built from them takes the K-major layouts its tensor cores read.
    A, B, D = np.ones((64, 32), np.int8), np.ones((32, 1), np.int8), np.ones((64, 1), np.int32)
    from_tensors = cuforge.op.Gemm(A=A, B=B, C=D, D=D, cc=80)
    assert (from_tensors.layout_A, from_tensors.layout_B) == (RowMajor, ColumnMajor)
    assert from_tensors.opclass == cuforge.OpcodeClass.TensorOp


def test_fp8_layouts_the_tensor_cores_do_not_take_run_simt_kernels_and_say_so(caplog):
    # fp8's tensor-op kernels are SM90's, A row-major and B column-major: other layouts, or an SM80 GPU, run
    # SIMT kernels of one fp8 type for A and B, said as int8's are.
    fp8 = dict(element_A="e4m3", element_B="e4m3", element_C="bf16", element_D="bf16")
    with caplog.at_level("WARNING", logger="cuforge"):
        rrr = cuforge.op.Gemm(**fp8, layout=RowMajor, cc=90)
    assert "no tensor-op kernel computes e4m3 x e4m3 with A row- and B row-major" in caplog.text, caplog.text
    assert rrr.opclass == cuforge.OpcodeClass.Simt
    assert "_sm80_gemm_simt_mma_e4m3_e4m3_f32_bf16_bf16_rrr_" in rrr.select(64, 64, 64)
    caplog.clear()
    with caplog.at_level("WARNING", logger="cuforge"):
        a100 = cuforge.op.Gemm(**fp8, **RCR, cc=80)
    assert "no tensor-op kernel computes e4m3 x e4m3 on this GPU (sm80 kernels" in caplog.text, caplog.text
    assert a100.opclass == cuforge.OpcodeClass.Simt
    caplog.clear()
    with caplog.at_level("WARNING", logger="cuforge"):
        hopper = cuforge.op.Gemm(**fp8, **RCR, cc=90)
    assert caplog.text == ""
    assert hopper.opclass == cuforge.OpcodeClass.TensorOp
    with pytest.raises(cuforge.InvalidArgumentError, match="no sm80 GEMM kernel"):
        cuforge.op.Gemm(element_A="e4m3", element_B="e5m2", element_C="bf16", element_D="bf16", **RCR, cc=80)



def test_int8_plans():
    plan = cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32, **RCR)
    assert plan.element_accumulator == cuforge.DataType.s32, "int8 inputs accumulate in s32 by default"
    assert "_tensorop_mma_s8_s8_s32_s32_s32_rcr_" in plan.select(4096, 4096, 4096)
    assert plan.select(4096, 4096, 4096).startswith("cuforge_sm90_")
    sm80 = cuforge.op.Gemm(element_A=np.int8, element_B=np.int8, element_C=np.int32, element_D=np.int32,
                           kernel_cc=80, **RCR)
    assert "cuforge_sm80_gemm_tensorop_sat_s8_s8_s32_s32_s32_rcr_" in sm80.select(4096, 4096, 4096)
    assert sm80.math_operation == cuforge.MathOperation.multiply_add_saturate, "what its kernels compute with"
    assert plan.math_operation == cuforge.MathOperation.multiply_add
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
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^beta: .*whole number of int32 \(at most 2147483647 in magnitude\), got 10000000000$"):
        plan.run(A, B, C, D, beta=1e10)
    with pytest.raises(cuforge.DeviceError):  # whole numbers pass the boundary
        plan.run(A, B, C, D, alpha=2, beta=-1)
    host = [np.zeros((64, 48), np.int8), np.zeros((32, 48), np.int8).T] + [np.zeros((64, 32), np.int32)] * 2
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^alpha: s32 outputs"):  # before any copy
        plan.run(host[0], host[1], host[2], host[3].copy(), alpha=0.5)


@no_gpu
def test_floating_point_epilogues_take_alpha_and_beta_within_their_range():
    """The epilogue computes in f32 but for f64 accumulation: 1e39 would be an infinity there."""
    plan = cuforge.op.Gemm(element=np.float16, **RCR)
    A, B, C, D = row_major(64, 48, np.float16, "A"), col_major(48, 32, np.float16, "B"), *(
        row_major(64, 32, np.float16, name) for name in "CD")
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^alpha: the epilogue computes in f32: .* got 1e\+39"):
        plan.run(A, B, C, D, alpha=1e39)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^beta: the epilogue computes in f32"):
        plan.run(A, B, C, D, beta=-1e39)
    for alpha in (3e38, float("inf")):  # within f32's range, or an infinity asked for
        with pytest.raises(cuforge.DeviceError):
            plan.run(A, B, C, D, alpha=alpha)
    f64 = cuforge.op.Gemm(element=np.float64, **RCR)
    with pytest.raises(cuforge.DeviceError):
        f64.run(row_major(64, 48, np.float64, "A"), col_major(48, 32, np.float64, "B"), None,
                row_major(64, 32, np.float64, "D"), alpha=1e39)
    conv = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    x, w, y = np.ones((1, 8, 8, 8), np.float16), np.ones((8, 3, 3, 8), np.float16), np.zeros((1, 6, 6, 8), np.float16)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^alpha: the epilogue computes in f32"):
        conv.run(x, w, None, y, alpha=1e39)


@pytest.mark.parametrize("a", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("b", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("out", ["bf16", "f16", "f32"])
def test_fp8_plans(a, b, out):
    plan = cuforge.op.Gemm(element_A=a, element_B=b, element_C=out, element_D=out, **RCR)
    assert plan.element_accumulator == cuforge.DataType.f32
    short = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
    name = plan.select(4096, 4096, 4096)
    assert name.startswith("cuforge_sm90_gemm_tensorop_mma_") and f"_{short[a]}_{short[b]}_f32_{out}_{out}_rcr_" in name


def test_a_pinned_fp8_tile_that_spills_builds_with_a_warning(caplog):
    """The CUTLASS Python interface's fp8 tests pin 128x128x128 ping-pong in 2x1 clusters: promoted, its two
    accumulators take 256 registers a thread and spill. It builds (as there), with a warning; the catalog, which
    the selection ranks, lists no such tile."""
    plan = cuforge.op.Gemm(element=cuforge.DataType.e4m3, element_accumulator=cuforge.DataType.f32, **RCR, cc=90)
    tile = {"threadblock_shape": [128, 128, 128], "cluster_shape": [2, 1, 1],
            "kernel_schedule": cuforge.KernelScheduleType.TmaWarpSpecializedPingpong,
            "epilogue_schedule": cuforge.EpilogueScheduleType.TmaWarpSpecialized}
    assert not any(t.threadblock_shape == [128, 128, 128] and "Pingpong" in str(t.kernel_schedule)
                   for t in plan.tile_descriptions())
    with caplog.at_level(logging.WARNING, logger="cuforge"):
        plan.tile_description = tile
        op = plan.construct()
    assert "_128x128x128_c2x1x1_s0_pingpong_" in op.name and "_fastaccum_" not in op.name
    spilled = [r for r in caplog.records if "spills fp8's two accumulators" in r.getMessage()]
    assert len(spilled) == 1, [r.getMessage() for r in caplog.records]
    with caplog.at_level(logging.WARNING, logger="cuforge"):
        plan.activation = "relu"  # the same tile: said once
    assert len([r for r in caplog.records if "spills fp8's two accumulators" in r.getMessage()]) == 1
    with pytest.raises(cuforge.InvalidArgumentError, match="384 accumulator registers"):
        plan.tile_description = dict(tile, threadblock_shape=[128, 192, 128])


def test_f64_plans_run_on_sm80_tensor_cores():
    plan = cuforge.op.Gemm(element=np.float64, layout=RowMajor)
    assert plan.element_accumulator == cuforge.DataType.f64
    assert plan.kernel_cc == 80, "no SM90 f64 kernels: the SM80 family runs them"
    assert "cuforge_sm80_gemm_tensorop_mma_f64_f64_f64_f64_f64_rrr_" in plan.select(1024, 1024, 1024)
    assert plan.select(1023, 1021, 1019).endswith("_a1x1x1")


def test_a_pinned_sm80_tile_has_hoppers_shared_memory_on_hopper():
    """The CUTLASS Python interface's SM90 f64 tests pin 128x128x32 in 4x2x1 warps of 3 stages: 192 KB of
    shared memory, more than an A100 has, within a Hopper GPU's 227 KB. Built for one, the SM80 kernel runs it."""
    tile = {"threadblock_shape": [128, 128, 32], "warp_count": [4, 2, 1], "stages": 3}
    plan = cuforge.op.Gemm(element=np.float64, layout=RowMajor, cc=90)
    plan.tile_description = tile
    op = plan.construct(alignment_A=1, alignment_B=1, alignment_C=1)
    assert "_128x128x32_w4x2x1_s3_" in op.name
    assert "cutlass::gemm::GemmShape<128, 128, 32>" in op.rt_module.emit()
    with pytest.raises(cuforge.InvalidArgumentError, match="exceed 166912 bytes of shared memory .an A100's"):
        cuforge.op.Gemm(element=np.float64, layout=RowMajor, cc=80).tile_description = tile
    with pytest.raises(cuforge.InvalidArgumentError, match="cannot be built for compute capability 80: .*an A100's"):
        cuforge.build([op.name], cc=80)
    with pytest.raises(cuforge.InvalidArgumentError,
                       match=r"exceed 101376 bytes of shared memory \(a compute capability 8.9 GPU's\)"):
        cuforge.op.Gemm(element=np.float64, layout=RowMajor, cc=89).tile_description = tile


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


def test_an_f16_plan_switches_every_description_to_simt():
    # The CUTLASS Python interface's opclass switch: an f16 plan's descriptions all become SIMT (SM80's
    # two-stage pipelined kernels, whatever the plan's cc), and back.
    plan = cuforge.op.Gemm(cc=90, element=np.float16, layout=RowMajor)
    assert plan.opclass == cuforge.OpcodeClass.TensorOp
    assert all(td.math_instruction.opcode_class == cuforge.OpcodeClass.TensorOp for td in plan.tile_descriptions())
    plan.opclass = cuforge.OpcodeClass.Simt
    descriptions = plan.tile_descriptions()
    assert descriptions and all(td.math_instruction.opcode_class == cuforge.OpcodeClass.Simt for td in descriptions)
    assert "_simt_" in plan.select(1024, 1024, 1024) and "_s2_" in plan.select(1024, 1024, 1024)
    assert len({plan.construct(td).rt_module.emit() for td in descriptions}) == len(descriptions)
    plan.opclass = cuforge.OpcodeClass.TensorOp
    assert "_tensorop_" in plan.select(1024, 1024, 1024)


def test_setting_an_opclass_without_kernels_leaves_the_plan_as_it_was():
    plan = cuforge.op.Gemm(element="bf16", layout=RowMajor)
    before = plan.select(1024, 1024, 1024)
    with pytest.raises(cuforge.InvalidArgumentError, match="opcode class simt"):
        plan.opclass = cuforge.OpcodeClass.Simt
    assert plan.opclass == cuforge.OpcodeClass.TensorOp
    assert plan.select(1024, 1024, 1024) == before
    with pytest.raises(cuforge.InvalidArgumentError, match="opcode class simt"):
        plan.opclass = "simt"  # the CUTLASS Python interface's spelling of Simt
    with pytest.raises(cuforge.InvalidArgumentError, match="OpcodeClass"):
        plan.opclass = "warp"


def test_sm90_gemms_read_c_of_the_inputs_type_beside_an_f32_d():
    """The CUTLASS Python interface's SM90 tests build f16 plans with C of f16 and D of f32 (its C defaults to the
    inputs' type): SM90 GEMM kernels read such a C (CUTLASS 3's epilogue takes C and D apart); SM80 kernels, a C
    of f32 beside a 16-bit D, and parallel split-K (its reduction reads C as D) do not."""
    for dt in (np.float16, "bf16"):
        plan = cuforge.op.Gemm(element_A=dt, element_B=dt, element_C=dt, element_D=np.float32,
                               element_accumulator=np.float32, layout=RowMajor)
        name = plan.select(4096, 4096, 4096)
        types = "f16_f16_f32_f16_f32" if dt is np.float16 else "bf16_bf16_f32_bf16_f32"
        assert name.startswith(f"cuforge_sm90_gemm_tensorop_mma_{types}_rrr_"), name
        assert "_swapab" in plan.select(16, 4096, 4096)
        assert plan.construct().name.startswith(f"cuforge_sm90_gemm_tensorop_mma_{types}_")
        assert all(plan.construct(td).name.split("_")[5:10] == types.split("_") for td in plan.tile_descriptions()[:6])
    with pytest.raises(cuforge.InvalidArgumentError, match=r"C f16 / D f32 \(sm90 kernels do: leave kernel_cc"):
        cuforge.op.Gemm(element_A=np.float16, element_B=np.float16, element_C=np.float16, element_D=np.float32,
                        element_accumulator=np.float32, layout=RowMajor, kernel_cc=80)
    with pytest.raises(cuforge.InvalidArgumentError, match="C f32 / D f16"):
        cuforge.op.Gemm(element_A=np.float16, element_B=np.float16, element_C=np.float32, element_D=np.float16,
                        element_accumulator=np.float32, layout=RowMajor)
    plan = cuforge.op.Gemm(element_A=np.float16, element_B=np.float16, element_C=np.float16, element_D=np.float32,
                           element_accumulator=np.float32, layout=RowMajor)
    # alignment_C counts the output's elements, as the interface's tests give it ([8, 8, 4] for f16 into f32).
    assert plan.construct(alignment_A=8, alignment_B=8, alignment_C=4).name.endswith("_a8x8x8")
    with pytest.raises(cuforge.InvalidArgumentError, match="alignment_C: expected a power of two from 1 to 4 elements "
                                                           "of f32"):
        plan.construct(alignment_C=8)
    plan.split_k_slices = 8
    plan.decomposition = cuforge.Decomposition.ParallelSplitK
    with pytest.raises(cuforge.InvalidArgumentError, match="C and D of one type"):
        plan.select(128, 128, 65536)


@no_gpu
def test_a_c_of_the_inputs_type_beside_an_f32_d_passes_the_boundary():
    """Alignments count C's elements: a 16-bit C and an f32 D of 8-element rows are 16-byte aligned both."""
    plan = cuforge.op.Gemm(element_A=np.float16, element_B=np.float16, element_C=np.float16, element_D=np.float32,
                           element_accumulator=np.float32, layout=RowMajor)
    A, B = row_major(64, 48, np.float16, "A"), row_major(48, 40, np.float16, "B")
    C, D = row_major(64, 40, np.float16, "C"), row_major(64, 40, np.float32, "D")
    for c in (C, None):
        with pytest.raises(cuforge.DeviceError):  # checked, then no GPU
            plan.run(A, B, c, D, beta=1.0 if c is not None else 0.0)
    with pytest.raises(cuforge.DataTypeError, match="C"):
        plan.run(A, B, row_major(64, 40, np.float32, "C"), D, beta=1.0)


def test_mixed_input_plans():
    """s8 beside f16 or bf16, either way round: SM80's mixed-input kernels, f32 accumulation by default, D of the
    16-bit type or f32; A row-major and B column-major only (the s8 operand K-major)."""
    for a, b in ((np.int8, np.float16), ("bf16", np.int8)):
        wide = b if a is np.int8 else a
        plan = cuforge.op.Gemm(element_A=a, element_B=b, element_C=wide, element_D=wide, **RCR)
        assert plan.element_accumulator == cuforge.DataType.f32
        assert plan.math_operation == cuforge.MathOperation.multiply_add_mixed_input_upcast
        name = plan.select(4096, 4096, 4096)
        assert name.startswith("cuforge_sm80_gemm_tensorop_mixed_") and "x64_" in name, name
        column_d = cuforge.op.Gemm(element_A=a, element_B=b, element_C=wide, element_D=wide, layout_A=RowMajor,
                                   layout_B=ColumnMajor, layout_C=ColumnMajor)
        assert "_mixed_" in column_d.select(256, 256, 256), "the transposed problem swaps the operands' types"
    with pytest.raises(cuforge.InvalidArgumentError, match="in these layouts"):
        cuforge.op.Gemm(element_A=np.int8, element_B=np.float16, element_C=np.float16, element_D=np.float16,
                        layout=RowMajor)
