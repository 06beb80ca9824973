"""The CUTLASS Python interface's module-level names beyond its operations, under `import cuforge as cutlass`:
its module paths (cutlass.utils.datatypes, cutlass.backend.utils.device, cutlass.op.gemm_grouped ...), its
registries (get_activations, get_swizzling_functors), cutlass_library's members of its swizzles and iterators,
and Conv2DProblemSize as its sizes are spelt there."""

from __future__ import annotations

import enum
import importlib
import importlib.util
import logging

import numpy as np
import pytest

import cuforge
import cuforge as cutlass

cutlass_library = pytest.importorskip("cutlass_library")


@pytest.mark.parametrize("path, name", [("utils.datatypes", "library_type"), ("backend.utils.device", "device_cc"),
                                        ("backend.utils.device", "device_sm_count"), ("op.gemm_grouped", "GroupedGemm"),
                                        ("op.conv", "Conv2dFprop"), ("op.op", "OperationBase"),
                                        ("epilogue.epilogue", "get_activations")])
def test_the_interfaces_module_paths_import_and_resolve(path, name):
    module = cutlass
    for part in path.split("."):
        module = getattr(module, part)
    assert importlib.import_module(f"cuforge.{path}") is module
    assert importlib.util.find_spec(f"cuforge.{path}") is not None
    assert callable(getattr(module, name))


def test_the_interfaces_export_module_and_profiler_module_import():
    from cuforge.emit.pytorch import pytorch
    from cuforge.utils.profiler import CUDAEventProfiler

    assert pytorch is cutlass.emit.pytorch and callable(pytorch), "the package's name stays the function"
    assert CUDAEventProfiler is cutlass.utils.profiler.CUDAEventProfiler
    with pytest.raises(ImportError, match="GpuTimer: the interface's timer of cuda-python events is not offered"):
        from cuforge.utils.profiler import GpuTimer
        del GpuTimer
    assert not hasattr(cutlass.utils.profiler, "GpuTimer")


@pytest.mark.parametrize("path, missing, says", [
    ("backend.evt", "backend.evt", "epilogue visitor trees"),
    ("backend.evt.ir.tensor", "backend.evt", "epilogue visitor trees"),  # the first package missing, as Python's
    ("backend.gemm_operation", "backend.gemm_operation", "run-time internals"),
    ("utils.check", "utils.check", "plan.construct"), ("library_defaults", "library_defaults", "catalog"),
    ("emit.common", "emit.common", "writes its own"), ("epilogue.evt_ops", "epilogue.evt_ops", "visitor tree")])
def test_the_interfaces_modules_cuforge_lacks_say_why(path, missing, says):
    with pytest.raises(ModuleNotFoundError, match=f"No module named 'cuforge.{missing}': .*{says}") as raised:
        importlib.import_module(f"cuforge.{path}")
    assert isinstance(raised.value, cuforge.InvalidArgumentError) and raised.value.name == f"cuforge.{missing}"
    with pytest.raises(ModuleNotFoundError, match=r"^No module named 'cuforge.nothing'$"):
        importlib.import_module("cuforge.nothing")  # not one of the interface's: Python's own error


def test_the_interfaces_profiler_refuses_bad_arguments_before_running():
    from cuforge.utils.profiler import CUDAEventProfiler

    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="expected a cuforge plan .* got str"):
        CUDAEventProfiler("plan")
    with pytest.raises(cuforge.InvalidArgumentError, match="iterations: expected 1 or more, got 0"):
        CUDAEventProfiler(plan, 10, 0)
    with pytest.raises(cuforge.InvalidArgumentError, match="warmup_iterations: expected an integer"):
        CUDAEventProfiler(plan, 1.5)
    A = np.ones((64, 64), np.float16)
    with pytest.raises(cuforge.InvalidArgumentError, match="D: the output overlaps input A"):
        CUDAEventProfiler(plan, 1, 1, A, A, A, A)  # the plan's own checks, in its first run


def test_the_operations_share_the_interfaces_base_class():
    assert cutlass.OperationBase is cutlass.op.OperationBase is cutlass.op.op.OperationBase
    for plan in (cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor),
                 cutlass.op.GroupedGemm(element=np.float16, layout=cutlass.LayoutType.RowMajor),
                 cutlass.op.Conv2dFprop(element=np.float16)):
        assert isinstance(plan, cutlass.OperationBase)


def test_the_interfaces_datatype_conversions():
    datatypes = cutlass.utils.datatypes
    assert datatypes.DataTypeSize[cutlass.DataType.bf16] == 16 and datatypes.DataTypeSize[cutlass.DataType.e4m3] == 8
    assert all(datatypes.DataTypeSize[t] == bits for t, bits in cutlass_library.DataTypeSize.items()
               if t.name in cutlass.DataType.__members__), "cutlass_library's sizes"
    assert cutlass.source_path == cutlass.CUTLASS_PATH
    assert datatypes.library_type(np.float16) == cutlass.DataType.f16
    assert datatypes.library_type(cutlass.DataType.bf16) == cutlass.DataType.bf16
    assert datatypes.numpy_type(cutlass.DataType.f32) is np.float32 and datatypes.numpy_type(cutlass.DataType.s8) is np.int8
    assert datatypes.numpy_type(cutlass.DataType.tf32) is None, "no NumPy type holds TF32"
    assert datatypes.is_numpy_available() and datatypes.is_numpy_tensor(np.zeros(2)) and not datatypes.is_numpy_tensor(2)
    assert not datatypes.is_torch_tensor(np.zeros(2)) and not datatypes.is_cupy_tensor(np.zeros(2))
    cupy_here = importlib.util.find_spec("cupy") is not None
    assert datatypes.is_cupy_available() == cupy_here
    assert datatypes.cupy_type(cutlass.DataType.f16) is (np.float16 if cupy_here else None), "CuPy's types are NumPy's"
    assert datatypes.cupy_library_type(np.float32) == (cutlass.DataType.f32 if cupy_here else None)
    assert datatypes.is_torch_available() == (importlib.util.find_spec("torch") is not None)
    assert datatypes.get_datatype_and_layout(np.zeros((3, 4), np.float16)) == (cutlass.DataType.f16,
                                                                               cutlass.LayoutType.RowMajor)
    assert datatypes.get_datatype_and_layout(np.zeros((3, 4), order="F")) == (cutlass.DataType.f64,
                                                                              cutlass.LayoutType.ColumnMajor)
    assert datatypes.get_datatype_and_layout(2.0) == (cutlass.DataType.f32, cutlass.LayoutType.RowMajor)
    assert datatypes.get_tensor_shape(np.zeros((2, 3))) == (2, 3) and datatypes.get_tensor_shape(1) == (1,)
    with pytest.raises(cuforge.InvalidArgumentError, match="neither row- nor column-major"):
        datatypes.get_datatype_and_layout(np.zeros((4, 4))[::2, ::2])
    with pytest.raises(cuforge.InvalidArgumentError, match="expected a NumPy, CuPy or torch array or a number, got str"):
        datatypes.get_tensor_shape("x")
    with pytest.raises(cuforge.DataTypeError):
        datatypes.library_type("no_such_type")
    with pytest.raises(cuforge.DataTypeError):
        datatypes.library_type(None)  # NumPy's dtype of None is float64
    subclass = np.zeros((2, 3), np.float32).view(type("Sub", (np.ndarray,), {}))
    assert datatypes.is_numpy_tensor(subclass) and datatypes.get_tensor_shape(subclass) == (2, 3)


def test_device_cc_takes_the_interfaces_device_argument():
    with pytest.raises(cuforge.InvalidArgumentError, match="^device: expected an integer, got True"):
        cutlass.device_cc(True)
    if cuforge.device_count() == 0:
        for call in (lambda: cutlass.device_cc(0), lambda: cutlass.device_cc(-1), lambda: cutlass.device_sm_count()):
            with pytest.raises(cuforge.DeviceError):
                call()
    else:
        assert cutlass.device_cc(-1) == cutlass.device_cc() == cutlass.device_cc(cutlass.device_id())
        assert cutlass.device_sm_count() > 0
    with pytest.raises(cuforge.DeviceError):
        cutlass.device_cc(2**40)  # no such device, past int too


def test_the_interfaces_registries():
    assert [f.name for f in cutlass.epilogue.get_activations()] == [
        "gelu", "hardswish", "identity", "leaky_relu", "relu", "sigmoid", "silu", "tanh"]
    swizzles = cutlass.swizzle.get_swizzling_functors()
    assert len(swizzles) == 9 and swizzles[3] is cutlass.swizzle.IdentitySwizzle8
    assert swizzles[6:] == [cutlass.swizzle.StridedDgradIdentitySwizzle1, cutlass.swizzle.StridedDgradIdentitySwizzle4,
                            cutlass.swizzle.StridedDgradHorizontalSwizzle]


def test_the_activations_are_the_interfaces_references_too():
    """Its harnesses computed the expected D with the activation itself: `activation(x)` on a NumPy array (or a torch
    tensor), leaky_relu with its slope; `activation.__name__` named their tests."""
    x = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 4.0], np.float32)
    wide = x.astype(np.float64)
    expected = {
        "identity": wide, "relu": np.maximum(wide, 0), "leaky_relu": np.where(wide > 0, wide, 0.2 * wide),
        "tanh": np.tanh(wide), "sigmoid": 1 / (1 + np.exp(-wide)), "silu": wide / (1 + np.exp(-wide)),
        "hardswish": wide * np.clip(wide + 3, 0, 6) / 6,
        "gelu": np.array([-0.0040496941, -0.15865525, -0.10032342, 0.0, 0.34573123, 1.9544997, 3.9998733]),
    }
    for f in cutlass.epilogue.get_activations():
        y = f(x)
        assert f.__name__ == f.name and y.dtype == np.float32, f
        np.testing.assert_allclose(y, expected[f.name], rtol=1e-6, atol=1e-7, err_msg=f.name)
    np.testing.assert_array_equal(cutlass.epilogue.leaky_relu(x, 0.5), np.where(x > 0, x, 0.5 * x))
    np.testing.assert_array_equal(cutlass.epilogue.leaky_relu(x, [0.5]), cutlass.epilogue.leaky_relu.numpy(x, 0.5))
    with pytest.raises(cuforge.InvalidArgumentError, match="^activation: relu takes no argument, got 0.5"):
        cutlass.epilogue.relu(x, 0.5)
    with pytest.raises(cuforge.InvalidArgumentError, match="^relu: expected a real array, got elements of <U1"):
        cutlass.epilogue.relu(np.array(["a"]))


def test_the_activations_of_torch_tensors_are_torchs():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    x = torch.linspace(-4, 4, 33, dtype=torch.bfloat16)
    assert torch.equal(cutlass.epilogue.gelu(x), F.gelu(x))
    assert torch.equal(cutlass.epilogue.leaky_relu(x), F.leaky_relu(x, 0.2))
    assert torch.equal(cutlass.epilogue.leaky_relu(x, 0.5), F.leaky_relu(x, 0.5))
    assert torch.equal(cutlass.epilogue.hardswish(x), F.hardswish(x))


def test_the_interfaces_tile_description_helpers():
    """Its sweeps named their cases by the tiles' procedural names and varied them with clone_and_update."""
    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, kernel_cc=80)
    td = plan.tile_descriptions()[0]
    t = td.threadblock_shape
    assert td.procedural_name() == f"1x1x1_{t[0]}x{t[1]}_{t[2]}x{td.stages}"
    assert td.procedural_name_2x() == f"{t[0]}x{t[1]}_{t[2]}x{td.stages}"
    assert td.num_threads == 32 * td.warp_count[0] * td.warp_count[1] * td.warp_count[2]
    clone = td.clone_and_update({"stages": 4, "threadblock_shape": [64, 64, 32]})
    assert (clone.stages, list(clone.threadblock_shape)) == (4, [64, 64, 32])
    assert list(td.threadblock_shape) == list(t) and clone.math_instruction is td.math_instruction
    assert "_64x64x32_" in plan.construct(clone).name and "_s4_" in plan.construct(clone).name
    with pytest.raises(cuforge.InvalidArgumentError, match="^clone_and_update: no field 'stagez'; the fields are"):
        td.clone_and_update({"stagez": 3})


def test_cutlass_librarys_swizzles_and_iterators_are_taken(caplog):
    gemm = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, kernel_cc=80)
    gemm.swizzling_functor = cutlass_library.SwizzlingFunctor.Identity8  # the interface's IdentitySwizzle8
    assert gemm.swizzling_functor == cutlass.swizzle.IdentitySwizzle8
    for strided in (cutlass.swizzle.StridedDgradIdentitySwizzle1, cutlass_library.SwizzlingFunctor.StridedDgradIdentity4):
        with pytest.raises(cuforge.InvalidArgumentError, match="a strided-dgrad swizzle schedules dgrad kernels"):
            gemm.swizzling_functor = strided
    # SM80 dgrad kernels take CUTLASS's strided-dgrad swizzle only: the interface's swizzles of dgrad are hints.
    dgrad = cutlass.op.Conv2dDgrad(element=np.float16, kernel_cc=80)
    with caplog.at_level(logging.INFO, logger="cuforge"):
        for swizzle in (cutlass_library.SwizzlingFunctor.StridedDgradIdentity1, cutlass.swizzle.StridedDgradHorizontalSwizzle,
                        cutlass.swizzle.IdentitySwizzle1):
            assert dgrad.construct(swizzling_functor=swizzle).name == dgrad.construct().name
            dgrad.swizzling_functor = swizzle
            assert dgrad.swizzling_functor is None
        analytic = cutlass_library.IteratorAlgorithm.Analytic
        assert dgrad.construct(iterator_algorithm=analytic).name == dgrad.construct().name
        dgrad.iterator_algorithm = cutlass_library.IteratorAlgorithm.Optimized
        assert dgrad.iterator_algorithm == cutlass.IteratorAlgorithm.Optimized
        fprop = cutlass.op.Conv2dFprop(element=np.float16, kernel_cc=80)
        few = cutlass_library.IteratorAlgorithm.FewChannels  # fprop's alone, as the interface had it
        assert fprop.construct(iterator_algorithm=few).name == fprop.construct().name
        with pytest.raises(cuforge.InvalidArgumentError, match="^iterator_algorithm few_channels: fprop's"):
            dgrad.construct(iterator_algorithm=few)
    assert "StridedDgradIdentity1: cuforge's dgrad kernels take CUTLASS's strided-dgrad swizzle" in caplog.text
    assert "Identity1: this plan's kernels take no such swizzle" in caplog.text
    assert "iterator_algorithm analytic" in caplog.text and "iterator_algorithm few_channels" in caplog.text
    with pytest.raises(cuforge.InvalidArgumentError, match="a strided-dgrad swizzle schedules dgrad kernels"):
        fprop.swizzling_functor = cutlass.swizzle.StridedDgradIdentitySwizzle4
    # A member of another of cutlass_library's enums is no spelling of one, though their member names agree.
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^tile_description\[.epilogue_schedule.\]: expected a "
                                                           r"cuforge.EpilogueScheduleType .* got KernelScheduleType"):
        gemm.tile_description = {"epilogue_schedule": cutlass_library.KernelScheduleType.TmaWarpSpecializedCooperative}


def test_cuforges_enums_equal_cutlass_librarys_members_of_their_names():
    """The interface's enums were cutlass_library's: its harnesses compare with them and look them up in its tables."""
    assert cutlass.OpcodeClass.Simt == cutlass_library.OpcodeClass.Simt == cutlass.OpcodeClass.Simt
    assert cutlass_library.OpcodeClass.Simt == cutlass.OpcodeClass.Simt
    assert cutlass.OpcodeClass.Simt != cutlass_library.OpcodeClass.TensorOp
    assert cutlass.LayoutType.RowMajor == cutlass_library.LayoutType.RowMajor
    assert cutlass.MathOperation.multiply_add == cutlass_library.MathOperation.multiply_add
    # Each equal pair hashes alike (cutlass_library's IntEnums hash as numbers: ConvKind is no cuforge enum, ConvMode one of theirs).
    for ours, theirs in ((cutlass.DataType.bf16, cutlass_library.DataType.bf16),
                         (cutlass.KernelScheduleType.TmaWarpSpecializedCooperative,
                          cutlass_library.KernelScheduleType.TmaWarpSpecializedCooperative),
                         (cutlass.swizzle.ThreadblockSwizzleStreamK, cutlass_library.SwizzlingFunctor.StreamK),
                         (cutlass.swizzle.IdentitySwizzle1, cutlass_library.SwizzlingFunctor.Identity1),
                         (cutlass.swizzle.StridedDgradIdentitySwizzle4, cutlass_library.SwizzlingFunctor.StridedDgradIdentity4)):
        assert ours == theirs and theirs == ours and hash(ours) == hash(theirs), (ours, theirs)
    assert cutlass_library.SwizzlingFunctorTag[cutlass.swizzle.IdentitySwizzle2]
    assert cutlass.ConvMode.CrossCorrelation == cutlass_library.ConvMode.CrossCorrelation == 0  # IntEnums alike
    assert cutlass_library.DataTypeNames[cutlass.DataType.f16] == "f16"
    assert cutlass_library.OpcodeClassNames[cutlass.OpcodeClass.TensorOp] == "tensorop"
    assert cutlass.DataType.f16 in {cutlass_library.DataType.f16} and cutlass.DataType.f16 not in {cutlass.DataType.bf16}
    # Another enum of other names is no spelling of one: IdentitySwizzle8 is cuforge's TileSchedulerType.Default.
    assert cutlass.swizzle.IdentitySwizzle8 != cutlass_library.SwizzlingFunctor.Identity8
    assert cutlass.DataType.f16 != "f16" and cutlass.DataType.f16 != 5
    # The enums are made of those members too (the interface's enums were cutlass_library's own).
    assert cutlass.DataType(cutlass_library.DataType.f16) is cutlass.DataType.f16
    assert cutlass.LayoutType(cutlass_library.LayoutType.ColumnMajor) is cutlass.LayoutType.ColumnMajor
    with pytest.raises(ValueError, match="is not a valid DataType"):
        cutlass.DataType(cutlass_library.LayoutType.RowMajor)


def test_the_interfaces_harness_spellings():
    plan = cutlass.op.Conv2d(kind="fprop", element=cutlass.DataType.f16, element_accumulator=cutlass.DataType.f32)
    assert (plan._element_a, plan._element_b, plan._element_c, plan._element_accumulator) == (
        cutlass.DataType.f16, cutlass.DataType.f16, cutlass.DataType.f16, cutlass.DataType.f32)
    assert cutlass.backend.epilogue.relu is cutlass.epilogue.relu
    assert importlib.import_module("cuforge.backend.epilogue") is cutlass.epilogue
    assert cuforge.op.conv2d._split_k((cutlass_library.SplitKMode.Serial, 1)) == (1, False)
    assert cuforge.op.conv2d._split_k((cutlass_library.SplitKMode.Parallel, 4)) == (4, True)
    with pytest.raises(cuforge.InvalidArgumentError, match="^split_k: the mode is 'serial' or 'parallel'"):
        cuforge.op.conv2d._split_k((cutlass_library.SplitKMode.NoneSplitK, 1))


def test_conv_kind_compares_as_the_interfaces_enum_and_as_a_name():
    plan = cutlass.op.Conv2dDgrad(element=np.float16)
    assert plan.conv_kind == cutlass_library.ConvKind.Dgrad and cutlass_library.ConvKind.Dgrad == plan.conv_kind
    assert plan.conv_kind != cutlass_library.ConvKind.Fprop and plan.conv_kind == "dgrad" and plan.conv_kind != "fprop"
    assert {"dgrad": 1}[plan.conv_kind] == 1 and f"{plan.conv_kind}" == "dgrad"
    other = enum.Enum("Passes", "DGRAD")  # an enum of another name is no spelling of the kind
    assert plan.conv_kind != other.DGRAD


def test_conv2d_problem_size_as_the_interface_spells_it():
    ps = cutlass.shape.Conv2DProblemSize(n=1, h=28, w=28, c=64, k=128, r=3, s=3, c_=64, pad_h=1, pad_w=1, stride_h=1,
                                         stride_w=1, dilation_h=1, dilation_w=1)
    assert (ps.N, ps.H, ps.W, ps.C, ps.K, ps.R, ps.S, ps.P, ps.Q) == (1, 28, 28, 64, 128, 3, 3, 28, 28)
    assert ps.implicit_gemm_size("fprop") == (784, 128, 576)
    fprop = ps.implicit_gemm_size(cutlass_library.ConvKind.Fprop)
    assert (fprop.m, fprop.n, fprop.k) == (784, 128, 576)
    assert ps.implicit_gemm_size(cutlass_library.ConvKind.Dgrad) == (784, 64, 1152)
    assert ps.implicit_gemm_size("wgrad") == (128, 576, 784)
    assert fprop.mk == (784, 576) and fprop.mn.row == 784 and fprop.kn.column == 128
    assert fprop.mk.leading_dimension(cutlass_library.LayoutType.RowMajor) == 576
    assert fprop.mk.leading_dimension(cutlass.LayoutType.ColumnMajor) == 784
    assert cutlass.shape.MatrixCoord(row=2, col=3).column == 3  # the interface's constructor's names
    with pytest.raises(cuforge.InvalidArgumentError, match="^leading_dimension: expected LayoutType.RowMajor"):
        fprop.mk.leading_dimension(cutlass.LayoutType.TensorNHWC)
    with pytest.raises(cuforge.InvalidArgumentError, match="^implicit_gemm_size: expected 'fprop', 'dgrad' or 'wgrad'"):
        ps.implicit_gemm_size("conv")
    same = cutlass.shape.Conv2DProblemSize.from_sizes((1, 28, 28, 64), (128, 3, 3, 64))
    assert (same.padding, same.stride, same.dilation, same.P, same.Q) == ((1, 1), (1, 1), (1, 1), 28, 28)
    with pytest.raises(cuforge.InvalidArgumentError, match="^from_sizes: expected input_size"):
        cutlass.shape.Conv2DProblemSize.from_sizes((1, 28, 28), (128, 3, 3, 64))
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^c_ \(the filter's channels\): expected 0 or more"):
        cutlass.shape.Conv2DProblemSize(1, 8, 8, 16, 16, 3, 3, -1, 1, 1, 1, 1, 1, 1)
    grouped = cutlass.shape.Conv2DProblemSize(1, 8, 8, 4, 8, 3, 3, 2, 1, 1, 1, 1, 1, 1, groups=2)
    assert grouped.implicit_gemm_size("fprop") == (64, 8, 18), "K = R·S·C / groups, as the interface's"
