"""The one-call runs on torch tensors (Gemm's, GroupedGemm's and Conv2d's ``run_tensors``, which read the tensors in
C++) against the Python path they stand in for, on a machine without torch or a GPU: a stand-in
torch module whose tensors carry made-up addresses. The core either takes a run whole (then, with
no GPU, it stops at the device check) or returns None, having done nothing, and the Python path
names what is wrong; both paths must refuse a bad run with the same words. The real torch runs the
same paths in tests/gpu."""

from __future__ import annotations

import importlib.util
import sys
import types

import numpy as np
import pytest

import cuforge
from cuforge.arrays import current_stream
from fake_arrays import no_gpu

pytestmark = [
    no_gpu,
    pytest.mark.skipif(importlib.util.find_spec("torch") is not None,
                       reason="torch is installed: the stand-in would shadow it (tests/gpu run the real one)"),
]


class _Dtype:
    __module__ = "torch"  # what cuforge.dtypes recognises torch's dtypes by

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class _Tensor:
    """A CUDA tensor of extents and element strides, as torch reports them."""

    def __init__(self, shape, strides, dtype, ptr, device=0, negative=False, layout=None):
        self.shape, self._strides, self.dtype = tuple(shape), tuple(strides), dtype
        self._ptr, self._device, self._negative = ptr, device, negative
        self.layout = _torch.strided if layout is None else layout

    def stride(self):
        if self.layout != _torch.strided:
            raise RuntimeError(f"{self.layout} tensors do not have strides")  # as torch's sparse tensors
        return self._strides

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return self._device

    def is_neg(self):
        return self._negative

    def dim(self):
        return len(self.shape)

    def permute(self, *dims):
        return _Tensor([self.shape[d] for d in dims], [self._strides[d] for d in dims], self.dtype, self._ptr,
                       self._device)

    def is_contiguous(self, memory_format=None):
        """torch's rule: dense in the format's order, innermost first, extents of 1 taking any stride."""
        order = (1, 3, 2, 0) if memory_format is _torch.channels_last else tuple(reversed(range(self.dim())))
        expected = 1
        for d in order:
            if self.shape[d] != 1:
                if self._strides[d] != expected:
                    return False
                expected *= self.shape[d]
        return True


_torch = types.ModuleType("torch")
_torch.Tensor = _Tensor
_torch.channels_last = object()
_torch.strided, _torch.sparse_coo = "torch.strided", "torch.sparse_coo"
_torch.float16, _torch.float32, _torch.int8 = _Dtype("float16"), _Dtype("float32"), _Dtype("int8")
_torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0)
_torch.broadcast_shapes = lambda *shapes: tuple(np.broadcast_shapes(*shapes))

GIB = 1 << 30
# A stream as CuPy's (a handle in .ptr): the Python path takes it, the one-call run leaves it there,
# so passing it runs a call by the Python path on the same stream 0.
PYTHON_PATH = types.SimpleNamespace(ptr=0)


@pytest.fixture(autouse=True)
def stand_in_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _torch)


def channels_last(n, c, h, w, slot, dtype=None):
    """An N, C, H, W tensor in channels_last memory (as torch's .contiguous(memory_format=...) makes)."""
    return _Tensor((n, c, h, w), (h * w * c, 1, w * c, c), dtype or _torch.float16, 0x10_0000_0000 + slot * GIB)


def nhwc(n, h, w, c, slot):
    """A plain-contiguous tensor read as N, H, W, C."""
    return _Tensor((n, h, w, c), (h * w * c, w * c, c, 1), _torch.float16, 0x10_0000_0000 + slot * GIB)


def plan():
    return cuforge.op.Conv2d(kind="fprop", element=np.float16, element_accumulator=np.float32)


def refusal(run):
    with pytest.raises(cuforge.Error) as e:
        run()
    return type(e.value), str(e.value)


# x 2 x 9 x 7 x 16, filters 32 x 3 x 3 x 16, y 2 x 9 x 7 x 32 (padding 1), in both forms.
CHANNELS_LAST = (channels_last(2, 16, 9, 7, 0), channels_last(32, 16, 3, 3, 1), channels_last(2, 32, 9, 7, 2))
PLAIN = (nhwc(2, 9, 7, 16, 0), nhwc(32, 3, 3, 16, 1), nhwc(2, 9, 7, 32, 2))


@pytest.mark.parametrize("operands", [CHANNELS_LAST, PLAIN], ids=["channels_last", "plain"])
@pytest.mark.parametrize("geometry", [dict(padding=1), dict(padding=(1, 1), stride=[1, 1], dilation=1)])
@pytest.mark.parametrize("split_k", [None, ("serial", 1), ["serial", 2]])
def test_the_core_takes_whole_runs_in_either_form(operands, geometry, split_k):
    x, w, y = operands
    g = {"stride": 1, "padding": 0, "dilation": 1, **geometry}
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan()._plan.run_tensors(x, w, None, y, g["stride"], g["padding"], g["dilation"], 1.0, 0, split_k, True)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan().run(x, w, None, y, split_k=split_k, **geometry)


@pytest.mark.parametrize("change", [
    dict(stride=0), dict(padding=-1), dict(padding=(1,)), dict(dilation=True), dict(stride=np.int64(1)),
    dict(split_k=("bogus", 2)), dict(split_k=("serial", 0)), dict(split_k=3), dict(alpha=np.float32(1)),
    dict(sync=1), dict(operands=(CHANNELS_LAST[0], CHANNELS_LAST[1], PLAIN[2])),
    dict(operands=(channels_last(2, 16, 0, 7, 0), CHANNELS_LAST[1], CHANNELS_LAST[2])),
    dict(operands=(CHANNELS_LAST[0], CHANNELS_LAST[1], np.zeros((2, 9, 7, 32), np.float16))),
])
def test_what_the_core_leaves_to_python(change):
    args = {"operands": CHANNELS_LAST, "stride": 1, "padding": 1, "dilation": 1, "alpha": 1.0, "split_k": None,
            "sync": True, **change}
    x, w, y = args.pop("operands")
    assert plan()._plan.run_tensors(x, w, None, y, args["stride"], args["padding"], args["dilation"], args["alpha"],
                                    0.0, args["split_k"], args["sync"]) is None


@pytest.mark.parametrize("operands, kwargs", [
    ((CHANNELS_LAST[0], CHANNELS_LAST[1], channels_last(2, 31, 9, 7, 2)), dict(padding=1)),  # K 31 against 32
    (CHANNELS_LAST, dict(padding=0)),                                                          # P is 7, not 9
    ((CHANNELS_LAST[0], CHANNELS_LAST[1], _Tensor((2, 32, 9, 7), (2016, 1, 224, 32), _torch.float32,
                                                  0x10_0000_0000 + 2 * GIB)), dict(padding=1)),  # D's element
    ((_Tensor((2, 16, 9, 7), (1008, 1, 112, 16), _torch.float16, 0x10_0000_0001), *CHANNELS_LAST[1:]),
     dict(padding=1)),                                                                         # A misaligned
    (CHANNELS_LAST, dict(padding=1, beta=0.5)),                                                # beta without C
    (CHANNELS_LAST, dict(padding=(1, 40))),                                                    # wider than W
])
def test_both_paths_refuse_with_the_same_words(operands, kwargs):
    fast = refusal(lambda: plan().run(*operands[:2], None, operands[2], **kwargs))
    assert fast[0] is not cuforge.DeviceError, fast
    assert fast == refusal(lambda: plan().run(*operands[:2], None, operands[2], stream=PYTHON_PATH, **kwargs))


class _Stream:
    """torch.cuda.Stream as the core reads it: its handle in .cuda_stream."""

    def __init__(self, handle):
        self.cuda_stream = handle


def _foreign(name, module, **members):
    """An instance of another library's stream class (its module and name are what the core reads)."""
    return type(name, (), {"__module__": module, **members})()


@pytest.mark.parametrize("stream", [
    None, 0, 7, 2**64 - 1, _Stream(0x5000),
    _foreign("Stream", "cuda.core", __cuda_stream__=lambda self: (0, 0x5001)),
    _foreign("CUstream", "cuda.bindings.driver", __int__=lambda self: 0x5002),
    _foreign("cudaStream_t", "cuda.cudart", __int__=lambda self: 0),
], ids=["current", "0", "7", "max", "torch", "protocol", "CUstream", "cudaStream_t"])
def test_the_core_takes_a_stream_given(stream):
    x, w, y = CHANNELS_LAST
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan()._plan.run_tensors(x, w, None, y, 1, 1, 1, 1.0, 0.0, None, True, stream)
    a = _Tensor((64, 32), (32, 1), _torch.float16, 0x10_0000_0000)
    b = _Tensor((32, 48), (48, 1), _torch.float16, 0x10_0000_0000 + GIB)
    d = _Tensor((64, 48), (48, 1), _torch.float16, 0x10_0000_0000 + 2 * GIB)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32)._plan.run_tensors(
            a, b, None, d, 1.0, 0.0, True, stream)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        cuforge.op.GroupedGemm(element=np.float16, element_accumulator=np.float32)._plan.run_tensors(
            [a], [b], None, [d], 1.0, 0.0, True, stream)


@pytest.mark.parametrize("stream", [
    -1, 2**64, True, 1.0, np.int64(0), "0", PYTHON_PATH, _Stream(-1), _Stream(None),
    _foreign("Stream", "cuda.core", __cuda_stream__=lambda self: (1, 5)),
    _foreign("Stream", "cuda.core", __cuda_stream__=lambda self: (False, 5)),  # a bool or float version was taken
    _foreign("Stream", "cuda.core", __cuda_stream__=lambda self: (0.0, 5)),
    _foreign("Stream", "cuda.core", __cuda_stream__=lambda self: (0, -5)),
    _foreign("Stream", "cuda.core", __cuda_stream__=(0, 5)),
    _foreign("CUstream", "mylib", __int__=lambda self: 5),
])
def test_other_streams_are_left_to_python_which_names_the_bad_ones(stream):
    x, w, y = CHANNELS_LAST
    assert plan()._plan.run_tensors(x, w, None, y, 1, 1, 1, 1.0, 0.0, None, True, stream) is None
    a = _Tensor((64, 32), (32, 1), _torch.float16, 0x10_0000_0000)
    b = _Tensor((32, 48), (48, 1), _torch.float16, 0x10_0000_0000 + GIB)
    d = _Tensor((64, 48), (48, 1), _torch.float16, 0x10_0000_0000 + 2 * GIB)
    gemm = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32)
    assert gemm._plan.run_tensors(a, b, None, d, 1.0, 0.0, True, stream) is None
    grouped = cuforge.op.GroupedGemm(element=np.float16, element_accumulator=np.float32)
    assert grouped._plan.run_tensors([a], [b], None, [d], 1.0, 0.0, True, stream) is None
    if stream is not PYTHON_PATH:
        says = r"^stream(\.cuda_stream|\.__cuda_stream__(\(\))?)?: expected"
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            gemm.run(a, b, None, d, stream=stream)


def test_a_stream_of_both_attributes_is_read_alike_on_both_paths():
    """torch.cuda.Stream has .cuda_stream and __cuda_stream__(): the core reads the attribute first, and so does
    Python's path now (it called the protocol first: one object could give two streams)."""
    both = _foreign("Stream", "torch.cuda", cuda_stream=0x5000, __cuda_stream__=lambda self: (0, 0x6000))
    assert current_stream([], both) == 0x5000
    x, w, y = CHANNELS_LAST
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):  # the core took it (as 0x5000)
        plan()._plan.run_tensors(x, w, None, y, 1, 1, 1, 1.0, 0.0, None, True, both)


def test_a_bias_and_a_plans_own_tensors():
    x, w, y = CHANNELS_LAST
    bias = _Tensor((32,), (1,), _torch.float16, 0x10_0000_0000 + 3 * GIB)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan()._plan.run_tensors(x, w, bias, y, 1, 1, 1, 1.0, 1.0, None, False)
    short = _Tensor((31,), (1,), _torch.float16, 0x10_0000_0000 + 3 * GIB)
    assert refusal(lambda: plan().run(x, w, short, y, padding=1, beta=1.0)) == refusal(
        lambda: plan().run(x, w, short, y, padding=1, beta=1.0, stream=PYTHON_PATH))
    own = cuforge.op.Conv2dFprop(input=x, weight=w, output=y, element_accumulator=np.float32)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        own.run(padding=1)


def test_gemm_takes_torch_matrices_whole():
    a = _Tensor((64, 32), (32, 1), _torch.float16, 0x10_0000_0000)
    b = _Tensor((32, 48), (48, 1), _torch.float16, 0x10_0000_0000 + GIB)
    d = _Tensor((64, 48), (48, 1), _torch.float16, 0x10_0000_0000 + 2 * GIB)
    gemm = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        gemm._plan.run_tensors(a, b, None, d, 1.0, 0.0, True)
    assert gemm._plan.run_tensors(a, b, None, d, 1.0, 0.0, 1) is None
    wrong = _Tensor((64, 47), (47, 1), _torch.float16, 0x10_0000_0000 + 2 * GIB)
    fast = refusal(lambda: gemm.run(a, b, None, wrong))
    assert fast[0] is not cuforge.DeviceError, fast
    assert fast == refusal(lambda: gemm.run(a, b, None, wrong, stream=PYTHON_PATH))


def test_gemm_takes_torch_batches_whole_and_leaves_more_batch_dimensions_to_python():
    base = 0x10_0000_0000
    a = _Tensor((4, 64, 32), (2048, 32, 1), _torch.float16, base)
    b = _Tensor((32, 48), (48, 1), _torch.float16, base + GIB)
    d = _Tensor((4, 64, 48), (3072, 48, 1), _torch.float16, base + 2 * GIB)
    gemm = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        gemm._plan.run_tensors(a, b, None, d, 1.0, 0.0, True)
    a4 = _Tensor((2, 2, 64, 32), (4096, 2048, 32, 1), _torch.float16, base)
    d4 = _Tensor((2, 2, 64, 48), (6144, 3072, 48, 1), _torch.float16, base + 2 * GIB)
    assert gemm._plan.run_tensors(a4, b, None, d4, 1.0, 0.0, True) is None
    wrong = _Tensor((4, 64, 47), (3008, 47, 1), _torch.float16, base + 2 * GIB)
    fast = refusal(lambda: gemm.run(a, b, None, wrong))
    assert fast[0] is not cuforge.DeviceError, fast
    assert fast == refusal(lambda: gemm.run(a, b, None, wrong, stream=PYTHON_PATH))


def test_grouped_gemm_takes_lists_of_torch_matrices_whole():
    def matrix(rows, cols, slot):
        return _Tensor((rows, cols), (cols, 1), _torch.float16, 0x10_0000_0000 + slot * GIB)

    A = [matrix(64, 32, 0), matrix(128, 32, 1)]
    B = [matrix(32, 48, 2), matrix(32, 48, 3)]
    D = [matrix(64, 48, 4), matrix(128, 48, 5)]
    grouped = cuforge.op.GroupedGemm(element=np.float16, element_accumulator=np.float32)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        grouped._plan.run_tensors(A, B, None, D, 1.0, 0.0, False)
    assert grouped._plan.run_tensors(A, B, None, D, 1.0, 0.0, None) is None
    assert grouped._plan.run_tensors(A, B, None, [D[0], np.zeros((128, 48), np.float16)], 1.0, 0.0, True) is None
    wrong = [D[0], matrix(127, 48, 5)]  # group 1's D one row short
    fast = refusal(lambda: grouped.run(A, B, None, wrong))
    assert fast[0] is not cuforge.DeviceError and "group 1" in fast[1], fast
    assert fast == refusal(lambda: grouped.run(A, B, None, wrong, stream=PYTHON_PATH))


def test_cuforge_ops_makes_its_plan_per_device_and_runs_in_one_call(monkeypatch):
    """cuforge.ops.gemm on stand-in tensors: its plan for the device (device=, which a change of
    Plan's keywords once dropped, failing every call) is made, and the run reaches the core."""
    def custom_op(name, mutates_args, device_types):
        def register(fn):
            fn.register_fake = lambda fake: fake
            return fn
        return register

    monkeypatch.setattr(_torch, "library", types.SimpleNamespace(custom_op=custom_op), raising=False)
    monkeypatch.delitem(sys.modules, "cuforge.ops", raising=False)
    ops = importlib.import_module("cuforge.ops")
    monkeypatch.delitem(sys.modules, "cuforge.ops")  # built on the stand-in: not for other tests

    class _Device:
        index = 0

    def matrix(rows, cols, slot):
        t = _Tensor((rows, cols), (cols, 1), _torch.float16, 0x10_0000_0000 + slot * GIB)
        t.device = _Device()
        t.new_empty = lambda shape, dtype: matrix(*shape, slot + 8)
        return t

    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        ops.gemm(matrix(64, 32, 0), matrix(32, 48, 1))
    (plan,) = ops._plans.values()
    assert plan._plan.device == 0
    # D of the batch A and B broadcast to, a batch of one broadcasting either way (as torch.matmul's).
    made = types.SimpleNamespace(new_empty=lambda shape, dtype: (shape, dtype))
    f16 = _torch.float16
    for a, b, d in (((4, 64, 32), (1, 32, 48), (4, 64, 48)), ((1, 64, 32), (4, 32, 48), (4, 64, 48)),
                    ((2, 3, 64, 32), (32, 48), (2, 3, 64, 48)), ((64, 32), (5, 32, 48), (5, 64, 48))):
        A = types.SimpleNamespace(shape=a, dtype=f16, new_empty=made.new_empty)
        assert ops._output(A, types.SimpleNamespace(shape=b, dtype=f16)) == (d, f16)
    # Mixed inputs: D of the 16-bit operand's type beside an int8 one, either way round.
    for a, b in ((_torch.int8, f16), (f16, _torch.int8)):
        A = types.SimpleNamespace(shape=(64, 32), dtype=a, new_empty=made.new_empty)
        assert ops._output(A, types.SimpleNamespace(shape=(32, 48), dtype=b)) == ((64, 48), f16)


def matrices(*shapes, **kwargs):
    """Row-major f16 stand-in matrices, each at its own made-up address."""
    return [_Tensor(shape, (shape[1], 1), _torch.float16, 0x10_0000_0000 + i * GIB, **kwargs)
            for i, shape in enumerate(shapes)]


def test_a_tensor_with_the_negative_bit_is_refused_by_name():
    """torch's negative bit (z.conj().imag): the memory holds v for a tensor of -v. The core leaves such a run
    to the Python layer, which refuses it; a kernel reading the memory would get the sign wrong."""
    a, b, d = matrices((64, 32), (32, 48), (64, 48))
    negative = _Tensor((32, 48), (48, 1), _torch.float16, 0x20_0000_0000, negative=True)
    gemm = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32)
    assert gemm._plan.run_tensors(a, negative, None, d, 1.0, 0.0, True) is None
    with pytest.raises(cuforge.InvalidArgumentError, match="^B: the tensor has torch's negative bit set"):
        gemm.run(a, negative, None, d)
    sparse = _Tensor((32, 48), (48, 1), _torch.float16, 0x20_0000_0000, layout=_torch.sparse_coo)
    with pytest.raises(cuforge.InvalidArgumentError, match="^B: a torch.sparse_coo tensor: .* x.to_dense"):
        gemm.run(a, sparse, None, d)  # torch's own error was its "Cannot access data pointer" RuntimeError
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        gemm.run(a, b, None, d)


class _ListStrides(_Tensor):
    """A tensor subclass whose stride() returns a list."""

    def stride(self):
        return list(self._strides)


def test_strides_of_another_sequence_type_are_read_or_refused_not_trusted():
    a, b = matrices((64, 32), (32, 48))
    d = _ListStrides((64, 48), (48, 1), _torch.float16, 0x30_0000_0000)
    gemm = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        gemm.run(a, b, None, d)  # the Python layer reads the list
    descriptor = (0x30_0000_0000, cuforge.DataType.f16, [64, 48], [48, 1], 0)
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: its shape and strides must be tuples"):
        gemm._plan.check(None, None, None, descriptor, 1.0, 0.0)


def test_a_device_index_beyond_an_int_is_not_a_device():
    a, b, d = matrices((64, 32), (32, 48), (64, 48))
    for index in (2**32, 2**63, 2**64):
        d._device = index
        gemm = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32)
        assert gemm._plan.run_tensors(a, b, None, d, 1.0, 0.0, True) is None  # no exception left set
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: device 4294967296 is not a device index"):
        gemm._plan.check(None, None, None, (0x30_0000_0000, cuforge.DataType.f16, (64, 48), (48, 1), 2**32), 1.0, 0.0)


def test_a_list_changed_while_its_tensors_are_read_survives():
    """torch's accessors run Python (a subclass's, a __torch_function__'s): one that empties the caller's list
    while the core reads it must not free the tensor being read."""
    held = []

    class _Emptying(_Tensor):
        def get_device(self):
            held.clear()
            held.extend(object() for _ in range(1000))
            return 0

    first = _Emptying((64, 32), (32, 1), _torch.float16, 0x40_0000_0000)
    a, b, *ds = matrices((64, 32), (32, 48), (64, 48), (64, 48), (64, 48))
    held[:] = [first, a, a]
    grouped = cuforge.op.GroupedGemm(element=np.float16, element_accumulator=np.float32)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        grouped._plan.run_tensors(held, [b, b, b], None, ds, 1.0, 0.0, True)
