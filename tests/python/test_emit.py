"""cuforge.emit: kernel sources, plan.construct() and compile()'s operations, and PyTorch extension sources (no
GPU, no torch).

Building and running the exported extensions is tests/gpu/test_export_gpu.py."""

import ast
import importlib.machinery
import importlib.util

import os
import re

import numpy as np
import pytest

import cuforge
from cuforge import InvalidArgumentError, LayoutType
from fake_arrays import no_gpu
from fresh_process import run_python

ROW, COL = LayoutType.RowMajor, LayoutType.ColumnMajor


def test_an_operation_answers_to_the_interfaces_procedural_name():
    op = cuforge.op.Gemm(element=np.float16, layout=LayoutType.RowMajor).construct()
    assert op.procedural_name() == op.name and op.name.startswith("cuforge_sm")


def test_an_operation_describes_its_kernel_as_the_interfaces_operations_do():
    """The interface's testbeds read op.tile_description.math_instruction, op.A.alignment, op.C, op.arch."""
    plan = cuforge.op.Gemm(element=np.float16, layout=ROW, kernel_cc=80)
    plan.tile_description = plan.tile_descriptions()[2]
    op = plan.construct(alignment_A=4)
    td = op.tile_description
    assert td.threadblock_shape == plan.tile_descriptions()[2].threadblock_shape
    assert repr(td.math_instruction) == repr(plan.tile_descriptions()[0].math_instruction)
    assert td.instruction_shape == [16, 8, 16]
    assert op.arch == 80 and op.element_accumulator == cuforge.DataType.f32
    assert op.A == (cuforge.DataType.f16, ROW, 4) and op.A.alignment == 4 and op.name.endswith("_a4x4x4")
    assert op.B.alignment == op.C.alignment == 4
    assert op.C.element == cuforge.DataType.f16 and op.C.layout == ROW
    assert op.swizzling_functor == cuforge.swizzle.IdentitySwizzle8
    # Its epilogue as the interface's linear combination (its testbeds read element_output and element_epilogue).
    assert op.epilogue_functor == (cuforge.DataType.f16, cuforge.DataType.f32, cuforge.DataType.f32,
                                   cuforge.epilogue.identity)
    relu = cuforge.op.Gemm(element=np.float64, layout=ROW)
    relu.activation = "relu"
    functor = relu.construct().epilogue_functor
    assert (functor.element_output, functor.element_epilogue) == (cuforge.DataType.f64, cuforge.DataType.f64)
    assert functor.activation_functor == cuforge.epilogue.relu
    conv = cuforge.op.Conv2dFprop(element=np.float16).construct()
    assert conv.arch == 90 and conv.A.layout == conv.B.layout == LayoutType.TensorNHWC
    assert not op.switched
    # A column-major C runs the kernel of Dᵀ = Bᵀ·Aᵀ: its operands are still described as the plan's.
    mixed = cuforge.op.Gemm(element_A=np.int8, element_B=np.float16, element_C=np.float16, element_D=np.float16,
                            element_accumulator=np.float32, layout_A=ROW, layout_B=COL, layout_C=COL, kernel_cc=80)
    op = mixed.construct()
    assert "_mixed_f16_s8_" in op.name and not op.switched
    assert (op.A, op.B, op.C) == ((cuforge.DataType.s8, ROW, 16), (cuforge.DataType.f16, COL, 8),
                                  (cuforge.DataType.f16, COL, 8))
    # The kernel's own instruction: an SM80 kernel an SM90 plan runs for 4-byte alignments computes with mma.sync.
    sm80 = cuforge.op.Gemm(element=np.float16, layout=ROW).construct(alignment_A=2)
    assert sm80.arch == 80 and sm80.tile_description.instruction_shape == [16, 8, 16]


def test_what_a_kernel_name_says_is_read_by_the_core_not_by_its_words():
    from cuforge.emit.conv_splits import conv_kind

    wgrad = "cuforge_sm90_wgrad_tensorop_mma_f16_f16_f32_f16_f16_crr_128x128x64_c1x1x1_s0_tmaws_tma_default_a8x8x8_splitk"
    config = cuforge._core.kernel_config(wgrad)
    assert config["parallel_split_k"] and not config["bias"] and not config["pointwise"]
    assert conv_kind(wgrad) == "wgrad"
    gemm = cuforge.op.Gemm(element=np.float16, layout=ROW).construct(bias=True).name
    assert cuforge._core.kernel_config(gemm)["bias"] and conv_kind(gemm) is None
    with pytest.raises(InvalidArgumentError):
        conv_kind("cuforge_sm90_fprop_is_not_a_kernel")


def test_emit_is_a_module_and_kernel_source_names_the_kernel():
    name = cuforge.list_gemms(90)[0]
    source = cuforge.emit.kernel_source(name)
    assert name in source and "cuforge_gemm_run" in source
    assert not callable(cuforge.emit)


def test_plans_from_tensors_of_any_size_construct_what_plans_from_types_do():
    # The CUTLASS Python interface's GEMM equivalence: 2 x 2 arrays give the plan its types and layouts,
    # never its kernel's size, and the alignments asked for are the kernel's.
    row, col = np.zeros((2, 2), np.float16), np.zeros((2, 2), np.float16, order="F")
    aligned = dict(alignment_A=8, alignment_B=8, alignment_C=8)
    for a, b, c in ((row, row, row), (col, row, col)):
        lay = [ROW if x.flags.c_contiguous else COL for x in (a, b, c)]
        types = cuforge.op.Gemm(element_A=np.float16, element_B=np.float16, element_C=np.float16,
                                element_D=np.float16, element_accumulator=np.float32,
                                layout_A=lay[0], layout_B=lay[1], layout_C=lay[2])
        tensors = cuforge.op.Gemm(A=a, B=b, C=c, D=c.copy(order="A"), element_accumulator=np.float32)
        assert tensors.construct(**aligned).rt_module.emit() == types.construct(**aligned).rt_module.emit()
        assert "_a8x8x8" in tensors.construct(**aligned).name
    grouped_types = cuforge.op.GroupedGemm(element=np.float16, layout=ROW, element_accumulator=np.float32)
    grouped_tensors = cuforge.op.GroupedGemm(A=[row], B=[row], C=[row], D=[row.copy()],
                                             element_accumulator=np.float32)
    assert grouped_tensors.construct(**aligned).rt_module.emit() == grouped_types.construct(**aligned).rt_module.emit()


def test_equal_plans_construct_equal_sources():
    # The CUTLASS Python interface compares plans built different ways by the source they emit.
    a = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90)
    b = cuforge.op.Gemm(element_A=np.float16, element_B=np.float16, element_C=np.float16, element_D=np.float16,
                        element_accumulator=np.float32, layout_A=ROW, layout_B=ROW, layout_C=ROW, cc=90)
    x = np.zeros((64, 64), np.float16)
    c = cuforge.op.Gemm(A=x, B=x, C=x, D=x, cc=90)
    sources = {p.construct(M=4096, N=4096, K=4096).rt_module.emit() for p in (a, b, c)}
    assert len(sources) == 1
    other = cuforge.op.Gemm(element=np.float16, layout_A=COL, layout_B=ROW, layout_C=ROW, cc=90)
    assert other.construct(M=4096, N=4096, K=4096).emit() not in sources


def test_each_listed_tile_constructs_its_own_kernel_and_the_plan_keeps_its_tile():
    for cc in (80, 90):
        plan = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=cc, kernel_cc=cc)
        tiles = plan.tile_descriptions()
        names = {plan.construct(td).name for td in tiles}
        assert len(names) == len(tiles)
        assert plan.tile_description is None  # construct(td) pins td for its own choice only


@pytest.mark.parametrize("change, message", [
    (dict(stages=100), "stages"),
    (dict(threadblock_shape=[17, 32, 5]), "17x32x5"),
])
def test_construct_refuses_a_tile_no_kernel_has(change, message):
    plan = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90)
    td = plan.tile_descriptions()[0]
    for field, value in change.items():
        setattr(td, field, value)
    with pytest.raises(InvalidArgumentError, match=message):
        plan.construct(td)
    assert plan.tile_description is None


@pytest.mark.parametrize("change, message", [
    (dict(stages=1000), "1000 stages of 16384 bytes exceed"),
    (dict(warp_count=[0, 2, 1]), "the warps must divide the tile's M and N"),
])
def test_an_sm80_tile_is_refused_for_its_own_reason(change, message):
    """The reason is the family's first row's: it was the last row's, a one-element kernel's ("2 stages, got 1000")."""
    plan = cuforge.op.Gemm(element=np.float16, layout=ROW, kernel_cc=80)
    td = cuforge.TileDescription(**{"threadblock_shape": [128, 128, 32], "stages": 3, "warp_count": [2, 2, 1], **change})
    with pytest.raises(InvalidArgumentError, match=message):
        plan.construct(td)


def test_construct_before_sm90_refuses_clusters_and_automatic_stages():
    plan = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=80)
    for field, value, message in (("cluster_shape", [2, 1, 1], "cluster"), ("stages", 0, "stages")):
        td = plan.tile_descriptions()[0]
        setattr(td, field, value)
        with pytest.raises(InvalidArgumentError, match=message):
            plan.construct(td)


def _export(plan, name, tmp_path, **problem):
    directory = cuforge.emit.pytorch(plan.construct(**problem), name, sourcedir=str(tmp_path / name))
    files = {p.name: p for p in directory.rglob("*") if p.is_file()}
    return directory, files


def test_gemm_export_writes_a_buildable_source_directory(tmp_path):
    plan = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90)
    plan.activation = "relu"
    op = plan.construct(M=1024, N=1024, K=1024)
    directory, files = _export(plan, "my_gemm", tmp_path, M=1024, N=1024, K=1024)
    assert set(files) == {"my_gemm.cpp", "my_gemm_kernel.cu", "abi.h", "kept_run.hpp", "launch.hpp", "setup.py"}
    assert (directory / "include" / "cuforge" / "kept_run.hpp").read_text().count("class KeptRun") == 1
    assert files["my_gemm_kernel.cu"].read_text() == op.emit()
    binding = files["my_gemm.cpp"].read_text()
    assert "TORCH_LIBRARY(my_gemm, m)" in binding and "PyInit_my_gemm" in binding
    assert "run(Tensor A, Tensor B, Tensor? C=None, float alpha=1.0, float beta=0.0) -> Tensor" in binding
    assert "TORCH_LIBRARY_IMPL(my_gemm, Meta, m)" in binding  # torch.compile traces through the Meta kernel
    # A name that is a macro of the headers (NULL) is refused by the build, as torch's macros would expand it.
    assert 'static_assert(std::string_view(CUFORGE_EXPANDED_TEXT(my_gemm)) == "my_gemm"' in binding
    assert "getCurrentCUDAStream" in binding and op.name in binding
    setup = files["setup.py"].read_text()
    ast.parse(setup)
    assert "CUDAExtension" in setup and "-gencode=arch=compute_90a,code=sm_90a" in setup
    assert '"-lcuda"' not in setup  # linking is setup.py's own: libraries=["cuda"]


def test_export_writes_every_header_its_kernel_includes(tmp_path):
    """An fp8 kernel of the 128x128 cooperative tile includes the loop that overlaps its promotion."""
    plan = cuforge.op.Gemm(element_A=cuforge.DataType.e4m3, element_B=cuforge.DataType.e4m3,
                           element_C=cuforge.DataType.bf16, element_D=cuforge.DataType.bf16,
                           element_accumulator=cuforge.DataType.f32, layout_A=ROW, layout_B=COL, layout_C=ROW, cc=90)
    op = plan.construct(M=4096, N=4096, K=4096)
    assert "_128x128x128_" in op.name and "_coop_" in op.name
    directory, files = _export(plan, "fp8_gemm", tmp_path, M=4096, N=4096, K=4096)
    assert '#include "cuforge/sm90_fp8_promotion.hpp"' in files["fp8_gemm_kernel.cu"].read_text()
    header = directory / "include" / "cuforge" / "sm90_fp8_promotion.hpp"
    assert "OverlappedPromotionPolicy" in header.read_text()
    assert (directory / "include" / "cuforge" / "abi.h").is_file()


def test_column_major_output_exports_the_transposed_kernel(tmp_path):
    plan = cuforge.op.Gemm(element=np.float16, layout_A=ROW, layout_B=ROW, layout_C=COL, cc=90)
    _, files = _export(plan, "gemm_t", tmp_path, M=512, N=512, K=512)
    assert "constexpr bool kTransposed = true;" in files["gemm_t.cpp"].read_text()


def test_grouped_and_conv_exports_have_their_operators(tmp_path):
    grouped = cuforge.op.GroupedGemm(element=np.float16, layout=ROW, cc=90)
    _, files = _export(grouped, "my_grouped", tmp_path)
    binding = files["my_grouped.cpp"].read_text()
    assert "Tensor[] A" in binding and "run_offsets(Tensor A, Tensor B, Tensor offsets" in binding
    for kind, first in (("fprop", "run(Tensor A"), ("dgrad", "run(int[] input_size"), ("wgrad", "run(int[] weight_size")):
        plan = cuforge.op.Conv2d(kind, element=np.float16)
        _, files = _export(plan, f"conv_{kind}", tmp_path)
        binding = files[f"conv_{kind}.cpp"].read_text()
        assert first in binding and f"Kind::{kind}" in binding and "ChannelsLast" in binding
        assert "int[2] stride=[1, 1], int[2] padding=[1, 1]" in binding, "the interface's modules padded by one"


def test_export_refuses_bad_names_and_operations(tmp_path):
    op = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90).construct()
    for name in ("1gemm", "my-gemm", "", "a b", "class", "None"):
        with pytest.raises(InvalidArgumentError, match="identifier"):
            cuforge.emit.pytorch(op, name, sourcedir=str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="construct"):
        cuforge.emit.pytorch("cuforge_sm90_gemm", "x", sourcedir=str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="cc"):
        cuforge.emit.pytorch(op, "x", cc="90", sourcedir=str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="sm_90a|9.0|90"):
        cuforge.emit.pytorch(op, "x", cc=80, sourcedir=str(tmp_path))  # an SM90 kernel cannot target 8.0
    # A name whose torch.ops namespace is torch's or cuforge's, or whose module `pip install` would replace, or too
    # long for its files' names (it left an empty sourcedir and blamed the directory).
    for name, says in (("aten", "torch's or cuforge's own namespace"), ("cuforge", "own namespace"),
                       ("m" * 5000, "^name: 5000 characters, longer than the 200 its files' names can hold"),
                       ("numpy", "already importable here"), ("pytest", "already importable here")):
        with pytest.raises(InvalidArgumentError, match=says):
            cuforge.emit.pytorch(op, name, sourcedir=str(tmp_path))
    assert not any(tmp_path.iterdir())  # nothing written for a refused export
    (tmp_path / "file").write_text("")
    for sourcedir, says in ((tmp_path / "file", "File exists"), (tmp_path / "file" / "sub", "Not a directory")):
        with pytest.raises(InvalidArgumentError, match=f"^sourcedir: cannot write the module's sources into .*{says}"):
            cuforge.emit.pytorch(op, "x", sourcedir=str(sourcedir))
    with pytest.raises(InvalidArgumentError, match="^sourcedir: cannot look at .*File name too long"):
        cuforge.emit.pytorch(op, "x", sourcedir=str(tmp_path / ("d" * 300)))
    if importlib.util.find_spec("torch") is None:
        with pytest.raises(cuforge.ToolchainError, match="torch is not installed"):
            cuforge.emit.pytorch(op, "x", jit=True)


def test_an_installed_export_is_exported_again(tmp_path, monkeypatch):
    """`pip install` of an export makes its name importable; exporting it again (to regenerate it) is taken, where a
    module of another project of that name is refused (its pip install would replace that project)."""
    op = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90).construct()
    site = tmp_path / "site"
    (site / "my_export-0.1.0.dist-info").mkdir(parents=True)
    module = site / f"my_export{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    module.write_bytes(b"")  # found, never imported
    monkeypatch.syspath_prepend(str(site))
    for summary, refused in (("Another project's extension", True), ("Built from a cuforge.emit.pytorch export: "
                                                                      "the kernel cuforge_sm90_gemm", False)):
        (site / "my_export-0.1.0.dist-info" / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: my_export\nVersion: 0.1.0\nSummary: {summary}\n")
        importlib.invalidate_caches()
        out = tmp_path / ("refused" if refused else "taken")
        if refused:
            with pytest.raises(InvalidArgumentError, match="a module 'my_export' is already importable here"):
                cuforge.emit.pytorch(op, "my_export", sourcedir=str(out))
        else:
            cuforge.emit.pytorch(op, "my_export", sourcedir=str(out))
            assert "description='Built from a cuforge.emit.pytorch export: the kernel " in (out / "setup.py").read_text()
    (site / "my_export.py").write_text("")  # a module of the same name first on the path: not the export's
    module.unlink()
    importlib.invalidate_caches()
    with pytest.raises(InvalidArgumentError, match="already importable here"):
        cuforge.emit.pytorch(op, "my_export", sourcedir=str(tmp_path / "shadowed"))


def test_export_overwrites_only_its_own_files(tmp_path):
    """The default sourcedir is the current directory: a project's own setup.py (or sources) is not replaced, nor
    another module's export, which would be left without a setup.py that builds it."""
    op = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90).construct()
    (tmp_path / "setup.py").write_text("# the project's own\n")
    with pytest.raises(InvalidArgumentError, match="setup.py' exists and is not written by cuforge.emit.pytorch"):
        cuforge.emit.pytorch(op, "gemm_a", sourcedir=str(tmp_path))
    assert (tmp_path / "setup.py").read_text() == "# the project's own\n" and not (tmp_path / "gemm_a.cpp").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "gemm_a.cpp").write_text("int main() {}\n")
    with pytest.raises(InvalidArgumentError, match="gemm_a.cpp' exists and is not written by cuforge"):
        cuforge.emit.pytorch(op, "gemm_a", sourcedir=str(mine))
    headers = tmp_path / "headers"
    (headers / "include" / "cuforge").mkdir(parents=True)
    (headers / "include" / "cuforge" / "launch.hpp").write_text("// mine\n")
    with pytest.raises(InvalidArgumentError, match="launch.hpp' exists and is not written by cuforge"):
        cuforge.emit.pytorch(op, "gemm_a", sourcedir=str(headers))
    assert (headers / "include" / "cuforge" / "launch.hpp").read_text() == "// mine\n"
    first = tmp_path / "exports"
    cuforge.emit.pytorch(op, "gemm_a", sourcedir=str(first))
    cuforge.emit.pytorch(op, "gemm_a", sourcedir=str(first))  # its own export again
    launch = first / "include" / "cuforge" / "launch.hpp"
    launch.write_text(launch.read_text().split("\n", 1)[1])  # as an export before the headers' mark wrote it
    cuforge.emit.pytorch(op, "gemm_a", sourcedir=str(first))
    with pytest.raises(InvalidArgumentError, match="holds the export of module 'gemm_a', whose setup.py this one"):
        cuforge.emit.pytorch(op, "gemm_b", sourcedir=str(first))
    assert "extension gemm_a:" in (first / "setup.py").read_text() and not (first / "gemm_b.cpp").exists()
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "gemm_a.cpp")  # opened to be written, it would block the export for ever
    with pytest.raises(InvalidArgumentError, match="gemm_a.cpp' exists and is not a regular file"):
        cuforge.emit.pytorch(op, "gemm_a", sourcedir=str(fifo))


def _check_arguments(source):
    """The message arguments of every TORCH_CHECK in a C++ source (after the condition)."""
    calls, start = [], 0
    while (start := source.find("TORCH_CHECK(", start)) >= 0:
        i, depth, quoted, args, current = start + len("TORCH_CHECK("), 1, False, [], ""
        while depth:
            ch = source[i]
            quoted ^= ch == '"' and source[i - 1] != "\\"
            if not quoted:
                depth += (ch in "([{") - (ch in ")]}")
            if depth and ch == "," and depth == 1 and not quoted:
                args.append(current.strip())
                current = ""
            elif depth:
                current += ch
            i += 1
        calls.append(args[1:] + [current.strip()])
        start = i
    return calls


def test_export_messages_never_stream_numbers(tmp_path):
    # Streamed numbers are formatted by code the binding instantiates itself, which crashed against
    # the process's libstdc++ on the H200 machine: numbers go through text() instead.
    allowed_names = {"name", "what", "kKernel", "status_text(status)", "type", "device", "t.device()",
                     "t.scalar_type()", "offsets.scalar_type()", "offsets.device()", "a_name", "c_name",
                     "std::string(mode)"}
    plans = [cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90),
             cuforge.op.GroupedGemm(element=np.float16, layout=ROW, cc=90),
             *(cuforge.op.Conv2d(kind, element=np.float16) for kind in ("fprop", "dgrad", "wgrad"))]
    for i, plan in enumerate(plans):
        binding = plan.construct().pytorch_binding(f"m{i}")
        for args in _check_arguments(binding):
            for arg in args:
                assert (arg.startswith('"') or arg.startswith("text(") or arg in allowed_names
                        or ("?" in arg and '"' in arg)), f"TORCH_CHECK streams {arg!r}"


def test_exported_bindings_declare_each_constant_once():
    """The binding is the common part and the operation's pasted into one namespace: a constant of both
    (kMaxExtent) was a redefinition, and every exported Conv2d module failed to compile (nvcc runs only where
    torch is: the GPU machine)."""
    plans = [cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90),
             cuforge.op.GroupedGemm(element=np.float16, layout=ROW, cc=90),
             *(cuforge.op.Conv2d(kind, element=np.float16) for kind in ("fprop", "dgrad", "wgrad"))]
    for plan in plans:
        binding = plan.construct().pytorch_binding("m")
        names = [name for line in binding.splitlines() if line.startswith("constexpr ")
                 for name in re.findall(r"\b(k[A-Z]\w*)\s*=(?!=)", line)]
        assert "kMaxExtent" in names, names
        assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_exported_operators_refuse_alpha_and_beta_their_epilogue_cannot_hold():
    """The operator checks its scalars as a plan's run does (1e39 ran as an infinity), against the type its kernel's
    epilogue computes in: f32, or f16 where an SM80 kernel accumulates f16 into f16."""
    plans = [(cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90), "f32", "3.4028234663852886e+38", 1),
             (cuforge.op.GroupedGemm(element=np.float16, layout=ROW, cc=90), "f32", "3.4028234663852886e+38", 2),
             (cuforge.op.Conv2d("fprop", element=np.float16), "f32", "3.4028234663852886e+38", 1),
             (cuforge.op.Gemm(element=np.float16, element_accumulator=np.float16, layout=ROW, kernel_cc=80), "f16",
              "65504.0", 1)]
    for plan, compute, largest, runs in plans:
        binding = plan.construct().pytorch_binding("m")
        assert f"constexpr double kLargestScalar = {largest};" in binding and f"computes in {compute}" in binding
        assert binding.count("  check_scalars(alpha, beta);\n") == runs, binding


def test_construct_with_a_tile_leaves_the_plan_as_it_was():
    plan = cuforge.op.Gemm(element=np.float16, layout=ROW, cc=90)
    plan.activation = "relu"
    core = plan._plan
    td = plan.tile_descriptions()[3]
    op = plan.construct(td, M=1024, N=1024, K=1024)
    assert plan._plan is core and plan.tile_description is None and plan.activation.name == "relu"
    assert op.rt_module.emit() == plan.construct(td, M=1024, N=1024, K=1024).emit()
    assert op.name.endswith("_relu") and "TORCH_LIBRARY(m, m)" in op.pytorch_binding("m")


def test_a_grouped_plan_with_a_column_major_d_is_not_exported(tmp_path):
    plan = cuforge.op.GroupedGemm(element=np.float16, layout_A=ROW, layout_B=ROW, layout_C=COL, cc=90)
    with pytest.raises(InvalidArgumentError, match="row-major C"):
        cuforge.emit.pytorch(plan.construct(), "g", sourcedir=str(tmp_path))


class _Tensor:
    """A tensor argument as the routing reads it: its N, C, H, W shape and its device."""

    class device:
        index = 0

    def __init__(self, *shape):
        self.shape = shape


# (N, H, W, C, K, R, S) of each case's convolution, 4 images, unit stride, no padding.
_EXTENTS = {"3x3": (4, 8, 8, 64, 64, 3, 3), "1x1": (4, 14, 14, 1024, 256, 1, 1),
            "split 1x1": (1, 1, 1, 2048, 512, 1, 1)}


def _conv_arguments(kind, extents):
    """The operator's leading arguments of a convolution of these extents (sizes as lists, tensors faked)."""
    n, h, w, c, k, r, s = extents
    x, filters, y = [n, c, h, w], [k, c, r, s], [n, k, h - r + 1, w - s + 1]
    if kind == "fprop":
        return [_Tensor(*x), _Tensor(*filters)]
    if kind == "dgrad":
        return [x, _Tensor(*y), _Tensor(*filters)]
    return [filters, _Tensor(*y), _Tensor(*x)]


SERIAL_3 = {"split_k_mode": "serial", "split_k_slices": 3}
PARALLEL = {"split_k_mode": "parallel"}


def _conv_op(kind, kernel_cc=None, problem=None, **settings):
    """The construct() of a Conv2d plan of f16 with f32 accumulation, its settings changed first."""
    plan = cuforge.op.Conv2d(kind, element=np.float16, element_accumulator=np.float32, kernel_cc=kernel_cc)
    for name, value in settings.items():
        setattr(plan, name, value)
    return plan.construct() if problem is None else plan.construct(problem=problem)


@pytest.mark.parametrize("make, extents, calls", [
    # SM90 fprop: no split of its own; the interface's serial and parallel splits go to a plan.
    (lambda: _conv_op("fprop"), "3x3",
     [({}, "operator"), (SERIAL_3, "plan"), (dict(PARALLEL, split_k_slices=7), "plan")]),
    # SM80 fprop: serial split-K in the kernel; parallel to a plan.
    (lambda: _conv_op("fprop", 80), "3x3", [(SERIAL_3, "operator"), (dict(PARALLEL, split_k_slices=7), "plan")]),
    # SM90 wgrad, parallel between the 4 images (8 slices by default, then 4, one per image): more slices than
    # images, and serial, to a plan.
    (lambda: _conv_op("wgrad"), "3x3",
     [({}, "operator"), ({"split_k_slices": 1}, "operator"), (SERIAL_3, "plan"),
      (dict(PARALLEL, split_k_slices=7), "plan"), (dict(PARALLEL, split_k_slices=2), "operator")]),
    # SM90 dgrad: unit stride only; strided dgrad to a plan (its SM80 kernels).
    (lambda: _conv_op("dgrad"), "3x3", [({}, "operator"), ({"stride": (2, 2), "padding": (1, 1)}, "plan")]),
    # SM80's parallel dgrad kernel is the unit-stride one: strided dgrad to a plan, even unsplit.
    (lambda: _conv_op("dgrad", 80, split_k_slices=4, decomposition=cuforge.Decomposition.ParallelSplitK), "3x3",
     [({"split_k_slices": 1}, "operator"), ({"stride": (2, 2), "padding": (1, 1), "split_k_slices": 1}, "plan")]),
    # Arguments the operator refuses itself (a mode of neither kind, slices not an integer or below 1) reach it.
    (lambda: _conv_op("fprop"), "3x3",
     [({"split_k_mode": "both", "split_k_slices": 3}, "operator"),
      ({"split_k_mode": "serial", "split_k_slices": 3.0}, "operator"),
      ({"split_k_mode": "serial", "split_k_slices": 0}, "operator")]),
    # A 1x1 fprop on a GEMM kernel: 1x1 problems by default; a padded one, and splits asked for, to a plan.
    (lambda: _conv_op("fprop", problem=_EXTENTS["1x1"]), "1x1",
     [({}, "operator"), (SERIAL_3, "plan"), ({"padding": (1, 1)}, "plan")]),
    # A 1x1 layer's GEMM kernel split in parallel by the plan: its own split by default.
    (lambda: _conv_op("fprop", problem=_EXTENTS["split 1x1"]), "split 1x1", [({}, "operator")]),
])
def test_exported_conv_runs_take_every_problem_the_interfaces_modules_took(monkeypatch, make, extents, calls):
    """The seed's conv modules took serial and parallel split-K, and any stride, at every call: a run the module's
    kernel cannot serve (as the core decides) goes to a cuforge plan (here recorded, not run), the others to the
    operator."""
    from cuforge.emit import conv_splits

    op = make()
    kind = conv_splits.conv_kind(op.name)
    assert ("_pointwise" in op.name) == ("1x1" in extents), op.name
    assert "split" not in extents or "_splitk" in op.name, op.name
    ran = []
    monkeypatch.setattr(conv_splits, "_taken", lambda op, kind, given: True)
    monkeypatch.setattr(conv_splits, "_plan_like", lambda op, device: "plan")
    monkeypatch.setattr(conv_splits, "_on_a_plan", lambda plan, kind, given, split, bias: ran.append("plan"))
    run = conv_splits.with_every_split(lambda *a, **k: ran.append(("operator", k.get("split_k_slices"))), op, kind)
    for kwargs, expected in calls:
        ran.clear()
        run(*_conv_arguments(kind, _EXTENTS[extents]), None, **{"stride": (1, 1), "padding": (0, 0), **kwargs})
        assert [r if r == "plan" else r[0] for r in ran] == [expected], (op.name, kwargs)
        if not kwargs and "_splitk" in op.name and "_sm90_" in op.name and "_pointwise" not in op.name:
            assert ran == [("operator", 4)], "the default split is at most one slice per image"


def test_an_exported_conv_run_without_padding_pads_by_one_as_the_interfaces_modules(monkeypatch):
    """The interface's modules bound padding=(1, 1) by default: a 1x1 layer's GEMM kernel serves the unpadded
    run, and a run that gives no padding goes to a plan (a padded 1x1 convolution)."""
    from cuforge.emit import conv_splits

    op = _conv_op("fprop", problem=_EXTENTS["1x1"])
    ran = []
    monkeypatch.setattr(conv_splits, "_taken", lambda op, kind, given: True)
    monkeypatch.setattr(conv_splits, "_plan_like", lambda op, device: "plan")
    monkeypatch.setattr(conv_splits, "_on_a_plan", lambda plan, kind, given, split, bias: ran.append("plan"))
    run = conv_splits.with_every_split(lambda *a, **k: ran.append("operator"), op, "fprop")
    run(*_conv_arguments("fprop", _EXTENTS["1x1"]), None, padding=(0, 0))
    run(*_conv_arguments("fprop", _EXTENTS["1x1"]), None)
    assert ran == ["operator", "plan"]


def test_an_exported_conv_keeps_its_own_epilogue_when_the_plan_changes(monkeypatch):
    """The routing judges the exported kernel by the settings it was built with, not the plan's later ones."""
    from cuforge.emit import conv_splits

    plan = cuforge.op.Conv2d("fprop", element=np.float16, element_accumulator=np.float32)
    op = plan.construct()
    plan.activation = "relu"
    ran = []
    monkeypatch.setattr(conv_splits, "_taken", lambda op, kind, given: True)
    run = conv_splits.with_every_split(lambda *a, **k: ran.append("operator"), op, "fprop")
    run(*_conv_arguments("fprop", _EXTENTS["3x3"]), None, (1, 1), (0, 0))
    assert ran == ["operator"]


def test_only_convolution_exports_are_routed():
    from cuforge.emit import conv_splits

    assert conv_splits.conv_kind(cuforge.op.Gemm(element=np.float16, layout=LayoutType.RowMajor).construct().name) is None
    assert conv_splits.conv_kind(_conv_op("wgrad").name) == "wgrad"


@no_gpu  # a fake toolkit's library (an ELF header alone): on a GPU, compile() would load it
def test_compile_returns_the_operation_it_built(tmp_path):
    """As the CUTLASS Python interface's compile() returns its operation (and keeps it as plan.operation), so
    that emit.pytorch(plan.compile(), ...) exports what was built; it says where the build is. Each plan
    kind, and a list of them for problems=. A fake toolkit builds at once."""
    from test_faults import fake_toolkit

    r = run_python("""
        import os, numpy as np, cuforge
        f16 = dict(element=np.float16, layout=cuforge.LayoutType.RowMajor)
        for plan in (cuforge.op.Gemm(**f16), cuforge.op.GroupedGemm(**f16), cuforge.op.Conv2dFprop(element=np.float16)):
            assert plan.operation is None
            op = plan.compile()
            assert isinstance(op, cuforge.emit.Operation) and plan.operation is op, op
            assert op.rt_module.emit() == cuforge.emit.kernel_source(op.name)
            assert os.path.isfile(op.library) and os.path.isfile(op.source_path), op.library
            print(op.cache_hit, plan.compile().cache_hit, op.build_seconds >= 0, len(op.cache_key) > 8)
        gemm = cuforge.op.Gemm(**f16)
        ops = gemm.compile(problems=[(16, 4096, 4096), (4096, 4096, 4096)])
        print(len(ops), ops[0].name != ops[1].name, gemm.operation is ops[-1],
              ops[0].name == gemm.select(16, 4096, 4096))
        conv = cuforge.op.Conv2dFprop(element=np.float16)  # the interface's order: epilogue_functor eighth
        small = conv.compile(None, None, None, None, None, None, None, cuforge.epilogue.relu,
                             problems=[((1, 8, 8, 16, 16, 3, 3), 1, 1, 1)])[0]
        # The same activation again changes nothing: the kernel built first stays the plan's.
        print(conv.compile(None, None, None, None, None, None, None, cuforge.epilogue.relu).name.endswith("_relu"),
              conv.activation == cuforge.epilogue.relu, conv.select(1, 8, 8, 16, 16, 3, 3, padding=1) == small.name,
              gemm.compile(problems=[]) == [] and gemm.operation is ops[-1])
    """, CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:5] == ["False True True True"] * 3 + ["2 True True True", "True True True True"], \
        r.stdout
