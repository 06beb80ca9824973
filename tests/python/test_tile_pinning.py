"""A plan's pinned tile descriptions (cuforge.op.tile_pinning): one refused for a threadblock shape no listed tile
has is kept and refused when the plan next builds or runs, as the CUTLASS Python interface found such shapes at
compile()."""

from __future__ import annotations

import pytest

import cuforge
from cuforge import LayoutType

RowMajor = LayoutType.RowMajor


def test_a_tile_of_an_impossible_shape_is_refused_when_the_plan_builds(tmp_path, monkeypatch):
    """The interface's conv test: `plan.tile_description = td` (17x32x5) is taken, `plan.compile()` fails (and wrote
    ./cutlass_python_compilation_device_error.txt, which the test removes); runs and construct() fail alike until
    another tile (or None) is set. A description refused for anything but its shape is refused at once."""
    monkeypatch.chdir(tmp_path)
    for plan in (cuforge.op.Conv2d(kind="fprop", element=cuforge.DataType.f16),
                 cuforge.op.Gemm(element=cuforge.DataType.f16, layout=RowMajor)):
        td = plan.tile_descriptions()[0]
        td.threadblock_shape = [17, 32, 5]
        plan.tile_description = td
        assert plan.tile_description == td
        for build in (plan.construct, plan.run, plan.compile):  # the file written by compile() alone
            with pytest.raises(cuforge.InvalidArgumentError, match=r"the pinned tile description \(17x32x5 tile"):
                build()
            assert (tmp_path / "cutlass_python_compilation_device_error.txt").exists() == (build == plan.compile)
        assert "17x32x5" in (tmp_path / "cutlass_python_compilation_device_error.txt").read_text()
        (tmp_path / "cutlass_python_compilation_device_error.txt").unlink()
        plan.tile_description = None
        assert plan.tile_description is None and plan.construct().name
        # compile(td) refuses it at once and leaves the plan as it was (nothing pending, no file).
        with pytest.raises(cuforge.InvalidArgumentError, match="17x32x5"):
            plan.compile(td)
        assert plan.tile_description is None and plan.construct().name
        assert not (tmp_path / "cutlass_python_compilation_device_error.txt").exists()
        plan.tile_description = {"threadblock_shape": [17, 32, 5]}  # a dict alike
        assert plan.tile_description.threadblock_shape == [17, 32, 5]
        plan.tile_description = None
    plan = cuforge.op.Gemm(element=cuforge.DataType.f16, layout=RowMajor)
    td = plan.tile_descriptions()[0]
    td.stages = 100  # refused for its stages: at once
    with pytest.raises(cuforge.InvalidArgumentError):
        plan.tile_description = td
    assert plan.tile_description is None
    # Extents no tile has (0x0x0) are refused at once too, not kept as a shape some other tile might have.
    for zero in ({"threadblock_shape": [0, 0, 0]}, cuforge.TileDescription([0, 0, 0], 3, [1, 1, 1], None)):
        with pytest.raises(cuforge.InvalidArgumentError, match="tile 0x0x0: each extent must be 1 to 1024"):
            plan.tile_description = zero
        assert plan.tile_description is None


def test_a_tile_of_the_other_opcode_class_moves_the_plan_to_its_kernels():
    """The interface built its kernel with the description's instruction: a SIMT one pinned on a tensor-op plan
    ran on the CUDA cores. So here: the plan's opclass follows it, and a tensor-op tile moves it back (its kernel
    family cuforge's choice again); a plan whose types have no kernel of that class refuses it."""
    f32 = cuforge.DataType.f32
    simt = cuforge.op.Gemm(element=f32, layout=RowMajor, opclass=cuforge.OpcodeClass.Simt).tile_descriptions()[0]
    tensor_op = cuforge.op.Gemm(element=f32, layout=RowMajor).tile_descriptions()[0]
    plan = cuforge.op.Gemm(element=f32, layout=RowMajor)
    assert plan.construct(simt).name.startswith("cuforge_sm80_gemm_simt_")  # for this choice only
    assert plan.opclass == cuforge.OpcodeClass.TensorOp
    plan.tile_description = simt
    assert plan.opclass == cuforge.OpcodeClass.Simt and plan.tile_description == simt
    assert "_simt_" in plan.construct().name and "_256x128x8_" in plan.construct().name
    plan.tile_description = tensor_op
    assert plan.opclass == cuforge.OpcodeClass.TensorOp and plan.kernel_cc == 90
    assert plan.construct().name.startswith("cuforge_sm90_gemm_tensorop_")
    bf16 = cuforge.op.Gemm(element=cuforge.DataType.bf16, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="its math_instruction is MathInstruction.*simt"):
        bf16.tile_description = simt
    assert bf16.opclass == cuforge.OpcodeClass.TensorOp and bf16.tile_description is None


def test_a_tile_naming_cutlass_librarys_instruction_is_taken():
    """The interface's tile descriptions held cutlass_library's MathInstruction: one of the plan's own instruction
    pins the tile (it was refused as not cuforge's); another is refused naming its fields."""
    L = pytest.importorskip("cutlass_library")
    plan = cuforge.op.Gemm(element=cuforge.DataType.f16, layout=RowMajor, element_accumulator=cuforge.DataType.f32,
                           cc=80)
    td = plan.tile_descriptions()[0]
    td.math_instruction = L.MathInstruction([16, 8, 16], L.DataType.f16, L.DataType.f16, L.DataType.f32,
                                            L.OpcodeClass.TensorOp)
    assert plan.construct(td).name == plan.construct(plan.tile_descriptions()[0]).name
    td.math_instruction = L.MathInstruction([16, 8, 16], L.DataType.bf16, L.DataType.bf16, L.DataType.f32,
                                            L.OpcodeClass.TensorOp)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^tile_description: its math_instruction is "
                                                           r"cutlass_library's MathInstruction\(16x8x16, bf16 x bf16"):
        plan.construct(td)
    # Its math operation is named where it alone differs; the constructor takes one as the attribute does.
    saturating = L.MathInstruction([16, 8, 16], L.DataType.f16, L.DataType.f16, L.DataType.f32, L.OpcodeClass.TensorOp,
                                   L.MathOperation.multiply_add_saturate)
    td = cuforge.TileDescription(plan.tile_descriptions()[0].threadblock_shape, 3, [2, 2, 1], saturating)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"TensorOp, multiply_add_saturate\); .* \(multiply_add\)"):
        plan.construct(td)
