"""A plan's epilogue and schedule settings on the CPU: activations, bias rows, swizzling functors,
split-K and stream-K decompositions, swapped kernels for small M, what a first run does when its
kernel is not built."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import cuforge
import cuforge as cutlass  # the seed's spelling must work unchanged


def test_activation_accepts_a_function_a_name_or_a_pair():
    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    assert plan.activation is cutlass.epilogue.identity
    plan.activation = cutlass.epilogue.relu
    assert plan.activation is cutlass.epilogue.relu
    assert plan.select(4096, 4096, 4096).endswith("_relu")
    plan.activation = "gelu"
    assert plan.activation is cutlass.epilogue.gelu
    plan.activation = (cutlass.epilogue.leaky_relu, 0.5)
    assert plan._plan.settings.activation_argument == 0.5
    plan.activation = ("leaky_relu", [0.25])  # the seed's notebook: "the (or a list of) parameter"
    assert plan._plan.settings.activation_argument == 0.25
    plan.activation = "leaky_relu"
    assert plan._plan.settings.activation_argument == 0.2, "the CUTLASS Python interface's default slope"
    with pytest.raises(cuforge.InvalidArgumentError, match=r"leaky_relu takes one slope, got \[0.1, 0.2\]"):
        plan.activation = ("leaky_relu", [0.1, 0.2])
    assert [f.name for f in plan.activations()] == [  # in the interface's order (its get_activations())
        "gelu", "hardswish", "identity", "leaky_relu", "relu", "sigmoid", "silu", "tanh"]
    with pytest.raises(cuforge.InvalidArgumentError, match="unknown 'softmax'"):
        plan.activation = "softmax"
    with pytest.raises(cuforge.InvalidArgumentError, match="relu takes no argument"):
        plan.activation = (cutlass.epilogue.relu, 0.5)
    with pytest.raises(cuforge.InvalidArgumentError, match="expected one of cuforge.epilogue"):
        plan.activation = np.tanh


def test_bias_rows_select_a_bias_kernel():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    assert plan.select(4096, 4096, 4096, bias=True).endswith("_bias")


def test_swizzling_functors(caplog):
    sm80 = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, kernel_cc=80)
    assert sm80.swizzling_functor is None
    assert set(sm80.swizzling_functors()) == {
        cutlass.swizzle.IdentitySwizzle1, cutlass.swizzle.IdentitySwizzle2, cutlass.swizzle.IdentitySwizzle4,
        cutlass.swizzle.IdentitySwizzle8, cutlass.swizzle.ThreadblockSwizzleStreamK}
    # CUTLASS's horizontal swizzle cannot drive GemmUniversal kernels (nvcc fails): refused, saying why.
    with pytest.raises(cuforge.InvalidArgumentError, match="get_tile_offset"):
        sm80.swizzling_functor = cutlass.swizzle.HorizontalSwizzle
    sm80.swizzling_functor = cutlass.swizzle.ThreadblockSwizzleStreamK
    assert "_streamk_" in sm80.select(4096, 4096, 4096)
    sm90 = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    assert sm90.swizzling_functors() == [cutlass.swizzle.IdentitySwizzle8, cutlass.swizzle.ThreadblockSwizzleStreamK]
    # The interface's 2.x swizzles (IdentitySwizzle1, its default, among them) leave its SM90 kernels as they
    # are: logged, the scheduler left to cuforge; a pinned one is unpinned.
    sm90.swizzling_functor = cutlass.swizzle.ThreadblockSwizzleStreamK
    for swizzle in (cutlass.swizzle.IdentitySwizzle1, cutlass.swizzle.IdentitySwizzle4,
                    cutlass.swizzle.HorizontalSwizzle):
        with caplog.at_level(logging.INFO, logger="cuforge"):
            sm90.swizzling_functor = swizzle
        assert sm90.swizzling_functor is None
        assert f"swizzling_functor {swizzle.name}: this plan's SM90 kernels take no" in caplog.text
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^swizzling_functor: expected a cuforge.TileSchedulerType"):
        sm90.swizzling_functor = np.array([1, 2])  # compared with names, it had no truth value


def test_split_k_and_decompositions():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    assert plan.decomposition == cuforge.Decomposition.Heuristic and plan.split_k_slices == 1
    plan.split_k_slices = 4
    assert plan.decomposition == cuforge.Decomposition.SplitK
    assert "_streamk_" in plan.select(256, 512, 32768)
    plan.decomposition = cuforge.Decomposition.DataParallel
    assert plan.split_k_slices == 1
    assert "_streamk_" not in plan.select(256, 512, 32768)
    with pytest.raises(cuforge.InvalidArgumentError, match="set split_k_slices first"):
        plan.decomposition = cuforge.Decomposition.SplitK


def test_one_slice_keeps_an_unsliced_decomposition():
    # split_k_slices = 1 means "no slices": it leaves split-K for the heuristic, and keeps a decomposition
    # the user forced that takes no slices (it undid data-parallel and stream-K before).
    for forced in (cuforge.Decomposition.DataParallel, cuforge.Decomposition.StreamK):
        plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
        plan.decomposition = forced
        picked = plan.select(128, 128, 8192)
        plan.split_k_slices = 1
        assert plan.decomposition == forced and plan.select(128, 128, 8192) == picked
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    plan.split_k_slices = 4
    assert plan.decomposition == cuforge.Decomposition.SplitK
    plan.split_k_slices = 1
    assert plan.decomposition == cuforge.Decomposition.Heuristic and plan.split_k_slices == 1


def test_parallel_split_k():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    # The default weighs it: long K over few output tiles, K slicing evenly.
    assert plan.select(128, 128, 65536).endswith("_splitk")
    assert "_splitk" not in plan.select(4096, 4096, 4096)
    plan.split_k_slices = 8
    plan.decomposition = cuforge.Decomposition.ParallelSplitK
    assert plan.split_k_slices == 8, "the slices carry over"
    plan.split_k_slices = 16
    assert plan.decomposition == cuforge.Decomposition.ParallelSplitK, "and the decomposition stays"
    plan.activation = "relu"
    name = plan.select(256, 512, 32768, bias=True)
    assert name.endswith("_default_a8x8x8_splitk_relu_bias"), name
    with pytest.raises(cuforge.InvalidArgumentError, match="K = 1000 cut into 16 equal slices"):
        plan.select(256, 512, 1000)
    with pytest.raises(cuforge.InvalidArgumentError, match="not a batch"):
        plan.select(256, 512, 32768, batch=4)
    # f64 accumulates in f64: no parallel split-K kernel, and the reason is given.
    f64 = cuforge.op.Gemm(element=np.float64, layout=cuforge.LayoutType.RowMajor)
    f64.split_k_slices = 4
    f64.decomposition = cuforge.Decomposition.ParallelSplitK
    with pytest.raises(cuforge.InvalidArgumentError, match="f32 accumulation"):
        f64.select(256, 512, 32768)


def test_first_run_waits_by_default_and_takes_fallback(monkeypatch):
    monkeypatch.delenv("CUFORGE_FIRST_RUN", raising=False)
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    assert plan.first_run == "wait"
    plan.first_run = "fallback"
    assert plan.first_run == "fallback"
    plan.first_run = cuforge._core.FirstRun.wait
    assert plan.first_run == "wait"
    with pytest.raises(cuforge.InvalidArgumentError, match=r"first_run: expected a cuforge.FirstRun \(one of wait, fallback\), got 'later'$"):
        plan.first_run = "later"
    assert plan.first_run == "wait"
    plan.first_run = "Fallback"  # as every enumerated setting takes its names
    assert plan.first_run == "fallback"


@pytest.mark.parametrize("setting, variable, cases", [
    ("first_run", "CUFORGE_FIRST_RUN", [("fallback", "fallback"), ("wait", "wait"), ("soon", "wait")]),
    ("autotune", "CUFORGE_AUTOTUNE", [("1", "True"), ("0", "False"), ("", "False"), ("true", "False")]),
])
def test_defaults_come_from_the_environment_and_other_values_are_warned_of(setting, variable, cases):
    code = f"import cuforge, numpy as np; print(cuforge.op.Gemm(element=np.float16).{setting})"
    for value, expected in cases:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, variable: value})
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == expected
        assert (f"{variable} is '{value}'" in out.stderr) == (value in ("soon", "true")), out.stderr


def test_a_warning_quoting_bytes_that_are_not_utf8_arrives_escaped():
    """An environment value that is not UTF-8 is warned of, its bytes escaped (the warning was lost to a
    UnicodeDecodeError in the log sink)."""
    code = "import cuforge, numpy as np; print(cuforge.op.Gemm(element=np.float16).autotune)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         env={**{k: v for k, v in os.environb.items()}, b"CUFORGE_AUTOTUNE": b"\xff1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == b"False"
    assert b"CUFORGE_AUTOTUNE is '\\xff1'" in out.stderr and b"UnicodeDecodeError" not in out.stderr, out.stderr


def test_fp8_fast_accum_is_opt_in_and_for_fp8_only():
    D = cuforge.DataType
    plan = cuforge.op.Gemm(element_A=D.e4m3, element_B=D.e4m3, element_C=D.bf16, element_D=D.bf16,
                           element_accumulator=D.f32, layout_A=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor, cc=90)
    assert plan.fp8_fast_accum is False
    assert "_tensorop_mma_e4m3_" in plan.select(8192, 8192, 8192), "promoted accumulation by default"
    plan.fp8_fast_accum = True
    assert plan.math_operation == cuforge.MathOperation.multiply_add_fast_accum
    chosen = plan.select(8192, 8192, 8192)
    assert "_tensorop_fastaccum_e4m3_" in chosen
    plan.fp8_fast_accum = False
    assert "_tensorop_mma_e4m3_" in plan.select(8192, 8192, 8192)
    with pytest.raises(cuforge.InvalidArgumentError, match="True or False"):
        plan.fp8_fast_accum = 1
    bf16 = cuforge.op.Gemm(element=D.bf16, layout=cuforge.LayoutType.RowMajor, cc=90)
    with pytest.raises(cuforge.InvalidArgumentError, match="fp8 .e4m3, e5m2. operands; this plan multiplies bf16 x bf16"):
        bf16.fp8_fast_accum = True
    assert bf16.fp8_fast_accum is False


def test_a_plan_naming_no_math_never_takes_opt_in_math():
    """3xTF32 and fp8 fast accumulation run only when asked for (math_operation / fp8_fast_accum)."""
    f32 = cuforge.op.Gemm(element=np.float32, layout=cutlass.LayoutType.RowMajor, kernel_cc=80)
    for shape in [(16, 4096, 4096), (1024, 1024, 1024), (8192, 8192, 8192)]:
        assert "_tensorop_mma_f32_" in f32.select(*shape)
    f32.math_operation = cuforge.MathOperation.multiply_add_fast_f32
    assert "_3xtf32_" in f32.select(1024, 1024, 1024)


def test_scales_are_for_fp8_plans_and_device_values():
    bf16 = cuforge.op.Gemm(element=cuforge.DataType.bf16, layout=cuforge.LayoutType.RowMajor, cc=90)
    with pytest.raises(cuforge.InvalidArgumentError, match="per-tensor scales apply to fp8 .e4m3, e5m2. operands"):
        bf16.run(scale_a=2.0)
    D = cuforge.DataType
    fp8 = cuforge.op.Gemm(element_A=D.e4m3, element_B=D.e4m3, element_C=D.bf16, element_D=D.bf16,
                          element_accumulator=D.f32, layout_A=cuforge.LayoutType.RowMajor,
                          layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor, cc=90)
    with pytest.raises(cuforge.InvalidArgumentError, match="scale_b: expected one float32 value on the GPU"):
        fp8._device_scale(np.ones((), dtype=np.float32), "scale_b")
    assert fp8._scales(0.5, None, None) == (None, None, 0.5), "a number multiplies the plan's alpha (1)"
    assert fp8._scales(0.5, 4, 2.0) == (None, None, 4.0)


def test_small_m_takes_a_swapped_kernel_which_a_tile_description_can_pin():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    assert plan.select(16, 4096, 4096).endswith("_swapab")
    assert not plan.select(4096, 4096, 4096).endswith("_swapab")
    swapped = [td for td in plan.tile_descriptions() if td.swap_ab]
    assert swapped and all(td.threadblock_shape[1] <= 64 for td in swapped)
    assert "swapped (D^T = B^T A^T)" in repr(swapped[0])
    plan.tile_description = swapped[0]
    assert plan.select(4096, 4096, 4096).endswith("_swapab"), "a pinned swapped tile runs any M"
    plan.tile_description = dict(threadblock_shape=[128, 16, 128], swap_ab=False)  # the same tile, unswapped
    assert not plan.select(16, 4096, 4096).endswith("_swapab")
    with pytest.raises(cuforge.InvalidArgumentError, match="swap_ab.*expected True or False"):
        plan.tile_description = dict(threadblock_shape=[128, 16, 128], swap_ab="yes")
    sm80 = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor, kernel_cc=80)
    with pytest.raises(cuforge.InvalidArgumentError, match="swapped kernels .* are SM90 GEMMs"):
        sm80.tile_description = dict(threadblock_shape=[128, 16, 64], warp_count=[4, 1, 1], stages=3, swap_ab=True)
