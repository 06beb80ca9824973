"""A plan's epilogue and schedule settings on the CPU: activations, bias rows, swizzling functors,
split-K and stream-K decompositions."""

from __future__ import annotations

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
