"""Odd arguments of the Python API, on the CPU (the fault probes of issue 17 and later): values of the wrong kind or
size, operands and streams whose own protocol code misbehaves, settings a plan cannot take. Each is a cuforge.Error
subclass naming the argument, raised before anything launches; never a Python exception from inside cuforge."""

from __future__ import annotations

import copy
import pickle
import sys

import numpy as np
import pytest

import cuforge
from cuforge.arrays import current_stream, operand_extents
from cuforge.messages import shown
from cuforge.shape import MatrixCoord
from fake_arrays import BASE, FakeDeviceArray, no_gpu
from test_faults import fake_toolkit, run_python

RowMajor = cuforge.LayoutType.RowMajor


_F8 = dict(element_A=cuforge.DataType.e4m3, element_B=cuforge.DataType.e4m3, element_C=cuforge.DataType.bf16,
           element_D=cuforge.DataType.bf16, layout_A=RowMajor, layout_B=cuforge.LayoutType.ColumnMajor,
           layout_C=RowMajor)


_SM90_NAME = "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x64x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8"


def _gemm(**kwargs):
    return cuforge.op.Gemm(element=np.float16, layout=RowMajor, **kwargs)


def _conv():
    return cuforge.op.Conv2d(kind="fprop", element=np.float16)


def _held_conv(channels):
    """An fprop plan holding x (1, 8, 8, 8), filters (4, 3, 3, channels) and y (1, 6, 6, 4)."""
    x, w, y = (np.ones(shape, np.float16) for shape in ((1, 8, 8, 8), (4, 3, 3, channels), (1, 6, 6, 4)))
    return cuforge.op.Conv2d(kind="fprop", element=np.float16, A=x, B=w, D=y)


def _compile_with_junk_instruction(plan):
    td = plan.tile_descriptions()[0]
    td.math_instruction = "abc"
    return plan.compile(td)


def _run_on(a, **protocol):
    """A GEMM run of `a` (its __cuda_array_interface__'s fields changed by `protocol`) on fake device B and D."""
    a.__cuda_array_interface__.update(protocol)
    b, d = (FakeDeviceArray(a.shape, ptr=BASE[name]) for name in "BD")
    return _gemm().run(a, b, None, d)


@pytest.mark.parametrize("call, says", [
    (lambda: _gemm().run(*[np.ones((8, 8), np.float16)] * 3, np.ones((8, 8), np.float16), alpha=10**400),
     "^alpha: expected a real number"),
    (lambda: setattr(_gemm(), "activation", (cuforge.epilogue.leaky_relu, 10**400)), "leaky_relu's slope"),
    (lambda: cuforge.op.Gemm(**_F8).run(scale_a=10**400), "^scale_a: expected a real number"),
    (lambda: cuforge.op.Gemm(**_F8).run(alpha="x", scale_a=2.0), "^alpha: expected a real number"),
    (lambda: cuforge.op.Gemm(A=5), "^A: expected an array or tensor"),
    (lambda: _conv().run(stride={1, 2}), r"^stride: expected an integer or \(height, width\)"),
    (lambda: _conv().run(padding=np.array(1)), "^padding: expected an integer"),
    (lambda: _conv().run(split_k=np.array(1)), r"^split_k: expected \(mode, slices\)"),
    (lambda: _gemm().compile(problems=[np.array(3)]), r"^problems: expected \(M, N, K\)"),
    (lambda: _gemm().compile(tile_description={"threadblock_shape": np.array(3)}), "expected three integers"),
    (lambda: _gemm(A=np.ones(8, np.float16), B=np.ones((8, 8), np.float16)).compile(),
     "^compile: the plan's A and B size the problem only as matrices"),
    (lambda: cuforge.shape.Conv2DProblemSize(1, 8, 8, 8, 8, 3, 3, 8, 2**62, 0, 1, 1, 1, 1),
     "^pad_h: 4611686018427387904 exceeds the 32-bit range the kernels index"),
    # Accepted before, as Python's own bool and complex were not: NumPy's (the imaginary part dropped).
    (lambda: _gemm().run(alpha=np.bool_(True)), "^alpha: expected a real number"),
    (lambda: _gemm().run(beta=np.complex64(1)), "^beta: expected a real number"),
    (lambda: setattr(_gemm(), "activation", (cuforge.epilogue.leaky_relu, np.complex64(0.1 + 1j))),
     "leaky_relu's slope must be a real number"),
    # Found by a fault probe: nanobind's own TypeErrors (naming no argument), a value taken through bool(),
    # a geometry ignored (and a build started), a protocol's malformed fields as KeyError or TypeError.
    (lambda: cuforge.emit.kernel_source(5), "^name: expected a kernel's name"),
    # Strings UTF-8 cannot hold (os.fsdecode's lone surrogates) met nanobind's "incompatible function arguments".
    (lambda: cuforge.emit.kernel_source("cuforge_\udc80"), r"^name: 'cuforge_\\udc80' is not Unicode text .a lone surrogate at position 8"),
    (lambda: cuforge.list_gemms(glob="*\ud800"), "^glob: .* is not Unicode text"),
    (lambda: cuforge.build(["x", "\udc80"], progress=False), "^names: .* is not Unicode text"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m\udc80"), "^name: .* is not Unicode text"),
    (lambda: _gemm().profile(64, 64, 64, filter="\udc80"), "^filter: .* is not Unicode text"),
    (lambda: _gemm().construct().pytorch_binding("m\udc80"), "^module: .* is not Unicode text"),
    (lambda: cuforge.build(["x"], jobs=2**40, progress=False), "^jobs: expected 0 .one per core. to"),
    (lambda: cuforge.build(["x"], cc="x", progress=False), "^cc: expected an integer"),
    # An SM90 kernel's own target is 9.0: a cc given otherwise was ignored (and the kernel built).
    (lambda: cuforge.build([_SM90_NAME], cc=80, progress=False), "run on compute capability 9.0 only, not 80"),
    (lambda: cuforge.build([_SM90_NAME], cc=12345, progress=False), "^compute capability 12345 is not a GPU"),
    (lambda: _gemm().construct().pytorch_binding(5), "^module: expected a module name"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", cc=2**40), "^cc: 1099511627776 is not a compute"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", sourcedir=5), "^sourcedir: expected a directory path"),
    (lambda: _gemm().select(128, 128, 128, 1, "x"), "^bias: expected True or False"),
    (lambda: _conv().compile(stride=0), "^stride: expected 1 or more"),
    (lambda: _conv().compile(problems=[((1, 8, 8, 8, 8, 3, 3), 1, 0, 1)], padding=1),
     "^stride, padding, dilation: each of problems gives its own"),
    (lambda: _gemm().run(type("Cai", (), {"__cuda_array_interface__": {}})(), None, None, None),
     "^A: its __cuda_array_interface__ is not the protocol's .* KeyError"),
    # Found by a second fault probe: operands a plan held (IndexError, AttributeError, TypeError from inside the
    # plan), a held convolution's tensors that disagree, flags and fields taken unchecked.
    (lambda: cuforge.op.Gemm(element=np.float16, A=type("Odd", (), {"shape": "ab"})()),
     "^A: expected an array or tensor, whose shape is a sequence of integers"),
    (lambda: cuforge.op.GroupedGemm(element=np.float16, A=[None], B=[None]), r"^A\[0\]: expected a tensor, got None"),
    (lambda: cuforge.op.GroupedGemm(element=np.float16, A=[np.ones(8, np.float16)],
                                    B=[np.ones((8, 8), np.float16)]).compile(),
     "^compile: the plan's A and B lists size the problem only as matrices"),
    (lambda: _held_conv(channels=4).compile(), r"^the plan's tensors: the filters' channels \(4\) must equal the"),
    (lambda: _held_conv(channels=8).compile(padding=1), r"^the plan's tensors: D \(the output\) is \(1, 6, 6, 4\)"),
    (lambda: _gemm().run(alpha=np.array(True)), "^alpha: expected a real number.*its element is bool"),
    (lambda: _gemm().run(*[np.ones((8, 8), np.float16)] * 2, None, np.ones((8, 8), np.float16), print_module="yes"),
     "^print_module: expected True or False"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", jit="yes"), "^jit: expected True or False"),
    (lambda: _compile_with_junk_instruction(_gemm()), "^tile_description.math_instruction: expected a cuforge"),
    (lambda: _compile_with_junk_instruction(cuforge.op.Conv2d(kind="fprop", element=np.float16, cc=90)),
     "^tile_description.math_instruction: expected a cuforge"),
    (lambda: setattr(_gemm(), "B", type("Odd", (), {"shape": (2, -1)})()), r"^B: extents are never negative"),
    (lambda: cuforge.op.Gemm(A=np.ones((8, 8), np.float16), B=np.ones((8, 8), np.float16),
                             D=np.ones((8, 8), np.complex64)), r"^D's dtype \(for element_C\): cuforge has no"),
    (lambda: _gemm(element_accumulator="x"), "^element_accumulator: cuforge has no element type for 'x'"),
    (lambda: _conv().construct(problem={1, 2, 3, 4, 5, 6, 7}), r"^problem: expected \(N, H, W, C, K, R, S\)"),
    (lambda: copy.deepcopy(_gemm()), "^a Gemm plan is not copied or pickled"),
    (lambda: pickle.dumps(_conv()), "^a Conv2d plan is not copied or pickled"),
    (lambda: _run_on(FakeDeviceArray((64, 64), device="0")), "^A: its __cuda_array_interface__ is not the protocol"),
    (lambda: _run_on(FakeDeviceArray((64, 64)), shape=(64.7, 64)), "^A: .*'float' object cannot be interpreted"),
    (lambda: _run_on(FakeDeviceArray((64, 64)), strides=(128,)), "^A: its __cuda_array_interface__ gives 1 strides"),
    (lambda: _run_on(FakeDeviceArray((64, 64)), mask=object()), "^A: its __cuda_array_interface__ has a mask"),
    (lambda: _run_on(FakeDeviceArray((-2, -3, 64, 64), strides=(-12288, 4096, 64, 1))),
     r"^A: extents are never negative, got shape \(-2, -3, 64, 64\)"),
    # No strides: not made of a negative extent (they were, and were refused as negative strides).
    (lambda: _run_on(FakeDeviceArray((64, 64)), shape=(64, -32), strides=None),
     r"^A: extents are never negative, got shape \(64, -32\)"),
], ids=["alpha-huge", "slope-huge", "scale-huge", "alpha-str-with-scale", "A-int", "stride-set", "padding-0d",
        "split-k-0d", "problem-0d", "tile-0d", "construct-1d", "conv-pad-huge", "alpha-numpy-bool", "beta-complex",
        "slope-complex", "kernel-source-int", "kernel-source-surrogate", "glob-surrogate", "build-surrogate",
        "pytorch-name-surrogate", "profile-filter-surrogate", "binding-module-surrogate", "build-jobs-huge", "build-cc-str", "build-sm90-cc-80",
        "build-cc-unknown", "binding-module-int",
        "pytorch-cc-huge", "pytorch-sourcedir-int", "select-bias-str", "conv-compile-stride-0",
        "conv-compile-geometry-twice", "cai-empty", "held-shape-str", "held-group-none", "held-groups-1d",
        "held-conv-channels", "held-conv-geometry", "alpha-0d-bool", "print-module-str", "pytorch-jit-str",
        "tile-math-instruction-str", "conv-tile-math-instruction-str", "held-set-negative", "dtype-of-d-for-c",
        "accumulator-str", "conv-problem-set", "plan-deepcopy", "plan-pickle", "cai-device-str", "cai-shape-float", "cai-strides-short", "cai-mask",
        "cai-negative-extents", "cai-negative-extent-no-strides"])
def test_odd_arguments_are_errors_of_cuforge_not_of_python(call, says):
    with pytest.raises(cuforge.Error, match=says):
        call()


@pytest.mark.parametrize("plan, arguments", [
    (_gemm, dict(problems="bad")), (_gemm, dict(alignment_A=16)),
    (lambda: cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor), dict(problems=[(1, 2)])),
    (_conv, dict(problems=[((1, 2, 3), 1, 0, 1)])),
], ids=["gemm-problems", "gemm-alignment", "grouped-problems", "conv-problems"])
def test_a_refused_compile_leaves_the_tile_unpinned(plan, arguments):
    p = plan()
    with pytest.raises(cuforge.InvalidArgumentError):
        p.compile(p.tile_descriptions()[0], **arguments)
    assert p.tile_description is None


def test_a_tile_description_compares_unequal_to_other_types():
    td = cuforge.TileDescription()
    assert td != None and td != 5 and not (td == "128x128x64")  # noqa: E711
    assert td in [None, td] and td == cuforge.TileDescription()


@no_gpu  # a fake toolkit's library (an ELF header alone): on a GPU, compile() would load it
def test_a_refused_compile_keeps_what_the_plan_compiled(tmp_path):
    """compile() with arguments the core refuses once put the plan's settings back even with no tile
    pinned, and new settings drop every kernel compiled: later runs chose (and built) afresh."""
    r = run_python("""
        import numpy as np, cuforge
        plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor, cc=90)
        small = plan.compile(M=128, N=128, K=128).name
        print(plan.select(4096, 4096, 4096) == small)  # a compiled kernel that serves the class is chosen
        try:
            plan.compile(M=128, N=128, K=128, alignment_A=3)
        except cuforge.InvalidArgumentError:
            print(plan.select(4096, 4096, 4096) == small)
    """, CUFORGE_CACHE_DIR=str(tmp_path / "cache"), CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"))
    assert r.stdout.split() == ["True", "True"], (r.stdout, r.stderr)


def test_an_integer_python_will_not_print_is_refused_by_its_size():
    """Python refuses str() of an int past 4300 digits: the refusals that showed the value raised that ValueError."""
    huge = 10**5000
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    calls = {"split_k_slices: an integer of 16610 bits is beyond": lambda: setattr(plan, "split_k_slices", huge),
             "split_k_slices: a negative integer of 16610 bits is beyond":
                 lambda: setattr(plan, "split_k_slices", -huge),
             "M: an integer of 16610 bits": lambda: plan.select(huge, 4, 4),
             "opclass: .*got an integer of 16610 bits": lambda: setattr(plan, "opclass", huge),
             r"threadblock_shape: expected three integers of 32 bits, got \[an integer of 16610 bits, 1, 1\]":
                 lambda: cuforge.TileDescription([huge, 1, 1], 3, [1, 1, 1]),
             r"cluster_shape\[7\]: list assignment index out of range":
                 lambda: plan.tile_descriptions()[0].cluster_shape.__setitem__(7, 1),
             "stream: expected a stream handle .*got an integer of 16610 bits":
                 lambda: current_stream([], huge),
             "use_rmm: expected initial to be a number of bytes below 2\\*\\*64": lambda: cuforge.use_rmm(huge)}
    # Messages that showed the value by its repr (fault probe 10: ValueError, or a raising __repr__'s error).
    conv = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    x, w, y = np.ones((1, 8, 8, 8), np.float16), np.ones((8, 3, 3, 8), np.float16), np.zeros((1, 6, 6, 8), np.float16)
    calls.update({
        "deterministic: expected True or False, got an integer of 16610 bits":
            lambda: setattr(plan, "deterministic", huge),
        "deterministic: expected True or False, got an object of type _ReprRaises":
            lambda: setattr(plan, "deterministic", _ReprRaises()),
        r"first_run: expected a cuforge.FirstRun \(one of wait, fallback\), got an integer of 16610 bits": lambda: setattr(plan, "first_run", huge),
        "slope must be a real number, got an integer of 16610 bits": lambda: setattr(plan, "activation",
                                                                                    ("leaky_relu", huge)),
        r"stride: expected an integer or \(height, width\), got \(an integer of 16610 bits, 1, 1\)":
            lambda: conv.run(x, w, None, y, stride=(huge, 1, 1)),
        r"split_k: expected \(mode, slices\).*got an integer of 16610 bits": lambda: conv.run(x, w, None, y, split_k=huge),
        "kind: expected 'fprop', 'dgrad' or 'wgrad', got an integer of 16610 bits":
            lambda: cuforge.op.Conv2d(kind=huge, element=np.float16),
        r"problems: expected \(M, N, K\) or \(M, N, K, batch\), got an integer of 16610 bits":
            lambda: plan.compile(problems=[huge]),
    })
    for says, call in calls.items():
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            call()
    with pytest.raises(cuforge.DataTypeError, match="no element type for an integer of 16610 bits"):
        cuforge.op.Gemm(element=huge)
    assert shown("x" * 1000).endswith("... (1002 characters)")
    assert shown([huge]) == "[an integer of 16610 bits]" and shown((huge,)) == "(an integer of 16610 bits,)"
    assert shown((1, "a")) == "(1, 'a')"
    looped = [huge]
    looped.append(looped)  # one level of items: a list holding itself, or nested deep, is not walked
    assert shown(looped) == "[an integer of 16610 bits, an object of type list]"


class _ReprRaises:
    def __repr__(self):
        raise RuntimeError("boom")


class _Raising:
    """An operand or stream whose protocol code raises (a property, __dlpack__)."""

    def __init__(self, attribute, error):
        setattr(type(self), attribute, property(lambda self: (_ for _ in ()).throw(error)))


def _raising(attribute, error):
    return type(f"Raising_{attribute}", (_Raising,), {})(attribute, error)


def test_an_operands_own_code_raising_is_that_operands_error():
    """A property of an operand's array protocol, its __dlpack__ or its shape that raises (RuntimeError,
    NotImplementedError) escaped as that exception; a stream's protocol alike."""
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A, B, D = (FakeDeviceArray((64, 64), np.float16, ptr=BASE[n]) for n in "ABD")
    for attribute, error in (("__cuda_array_interface__", RuntimeError("device lost")),
                             ("__dlpack__", NotImplementedError("no export"))):
        with pytest.raises(cuforge.InvalidArgumentError,
                           match=f"^A: reading it raised {type(error).__name__}: "):
            plan.run(_raising(attribute, error), B, None, D)
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: reading it raised ValueError: 'lazy'"):
        operand_extents(_raising("shape", ValueError("lazy")), "A")  # a plan built of operands reads their shapes
    for attribute in ("__cuda_stream__", "cuda_stream"):
        with pytest.raises(cuforge.InvalidArgumentError, match="^stream: reading it raised RuntimeError"):
            current_stream([A], _raising(attribute, RuntimeError("closed")))


def test_an_array_of_a_module_named_like_cupy_is_not_taken_for_cupys():
    """type(x).__module__.startswith("cupy") took cuPyNumeric's arrays for CuPy's (a KeyError without CuPy)."""
    Like = type("ndarray", (FakeDeviceArray,), {"__module__": "cupynumeric._array"})
    assert current_stream([Like((4, 4))], None) == 0


def test_build_progress_without_a_usable_stderr(monkeypatch):
    """cuforge.build's progress read sys.stderr.isatty(): None (pythonw, a daemon) or a closed stderr raised
    AttributeError or ValueError before any build."""
    import io

    from cuforge.build import progress_line

    closed = io.StringIO()
    closed.close()
    for stderr in (None, closed):
        monkeypatch.setattr(sys, "stderr", stderr)
        progress_line()(1, 2, 0, "cuforge_sm90_gemm")
    shown_to = io.StringIO()
    monkeypatch.setattr(sys, "stderr", shown_to)
    report = progress_line()
    report(1, 2, 0, "first")
    report(2, 2, 1, "second")
    assert shown_to.getvalue().splitlines()[-1].startswith("build [" + "#" * 30 + "] 2/2 1 failed")


def test_compile_refuses_an_array_for_batch():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="^batch: expected an integer"):
        plan.compile(batch=np.array([1, 2]))  # `batch == 1` of an array raised NumPy's ambiguous-truth ValueError


def test_scalars_of_text_or_time_are_refused():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A, B, D = (FakeDeviceArray((64, 64), np.float16, ptr=BASE[n]) for n in "ABD")
    for alpha in (np.array(["2"]), np.timedelta64(5), np.datetime64("2026-12-07")):
        with pytest.raises(cuforge.InvalidArgumentError, match="^alpha: expected a real number, got .* of dtype"):
            plan.run(A, B, None, D, alpha=alpha)


def test_negative_tile_values_are_refused():
    """TileDescription([-128, 128, 64], -3, [-4, 1, 1]) was made, with num_threads -128 and a name of
    '1x1x1_-128x128_64x-3'."""
    for args, says in ((([-128, 128, 64], 3, [4, 1, 1]), "threadblock_shape: expected three integers of 32 bits of 0 "
                                                         "or more, got \\[-128, 128, 64\\]"),
                       (([128, 128, 64], -3, [4, 1, 1]), "stages: expected an integer of 32 bits of 0 or more, got -3"),
                       (([128, 128, 64], 3, [-4, 1, 1]), "warp_count: expected three integers")):
        with pytest.raises(cuforge.InvalidArgumentError, match=f"^TileDescription.{says}"):
            cuforge.TileDescription(*args)


def test_an_array_protocol_of_bool_extents_is_refused():
    A = FakeDeviceArray((4, 4))
    A.__cuda_array_interface__["shape"] = (True, True)  # read as 1 x 1
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: its __cuda_array_interface__ is not the protocol's.*"
                                                           "True is a bool, not an integer"):
        cuforge.arrays.describe(A, "A")


def test_messages_show_what_python_can_print():
    class Lying(int):
        def __lt__(self, other):
            raise RuntimeError("no order")

    class BadRepr:
        def __repr__(self):
            return 5

    assert shown(2**64) == "18446744073709551616" and shown(-(10**5000)) == "a negative integer of 16610 bits"
    assert shown(Lying(3)) == "3" and shown(np.int64(7)) == repr(np.int64(7)) and shown(True) == "True"
    assert shown(BadRepr()) == "an object of type BadRepr"
    assert MatrixCoord(2, 3) == MatrixCoord(row=2, col=3) == MatrixCoord(2, column=3)
    with pytest.raises(cuforge.InvalidArgumentError, match="^MatrixCoord: give the columns once"):
        MatrixCoord(2, 3, column=3)
    td = cuforge.TileDescription([128, 128, 64], 3, [2, 2, 1])
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^TileDescription.threadblock_shape\[slice"):
        td.threadblock_shape[::2] = [1]  # an extended slice of another length
    assert td.threadblock_shape == [128, 128, 64]


def test_build_progress_never_goes_to_stdout(monkeypatch, capsys):
    from cuforge.build import progress_line

    monkeypatch.setattr(sys, "stderr", None)  # print(file=None) prints to stdout
    progress_line()(1, 2, 0, "cuforge_sm90_gemm")
    assert capsys.readouterr().out == ""
