"""Operands from NumPy, PyTorch and CuPy arrays, as the C++ core's descriptors.

A descriptor is ``(data_ptr, DataType, shape, strides_in_elements, device)``, device -1 for host
memory. PyTorch tensors, CuPy arrays (``__cuda_array_interface__``) and JAX or other DLPack arrays
(``__dlpack__``) are used in place (their strides honoured); NumPy arrays are copied to the GPU
through a staging buffer of each run's own, freed on its stream after the run.
"""

from __future__ import annotations

import operator
import sys

from . import _core
from ._core import DataTypeError, DeviceBuffer, InvalidArgumentError
from .dtypes import to_datatype, torch_datatype
from .messages import shown


def _torch_type():
    torch = sys.modules.get("torch")
    return torch.Tensor if torch is not None else None


def _extent(value) -> int:
    """An extent or stride of an array protocol: an integer, not a bool (operator.index takes True as 1)."""
    if isinstance(value, bool):
        raise TypeError(f"{shown(value)} is a bool, not an integer")
    return operator.index(value)


def _raised(name: str, e: Exception) -> InvalidArgumentError:
    """The error of an operand (or stream) that raised while cuforge read it: a property of its array or stream
    protocol, its __dlpack__, its shape (the exception is the error's cause)."""
    try:
        said = f": {shown(str(e))}"
    except Exception:  # noqa: BLE001 - an exception whose own str() raises (or holds an int Python will not print)
        said = ""
    return InvalidArgumentError(f"{name}: reading it raised {type(e).__name__}{said}")


def describe(x, name: str):
    """The descriptor of a device array, or None for a host (NumPy) array that needs staging."""
    try:
        return _describe(x, name)
    except DataTypeError as e:
        raise DataTypeError(f"{name}: {e}") from None
    except _core.Error:
        raise
    except Exception as e:  # noqa: BLE001 - the operand's protocol properties and methods are its own code
        raise _raised(name, e) from e


def operand_extents(x, name: str) -> tuple:
    """An operand's extents as a run reads them: a tensor's or array's shape, else its array protocol's
    (__cuda_array_interface__, __array_interface__), else NumPy's for the value (a nested list, which
    NumPy reads whole)."""
    try:
        shape = getattr(x, "shape", None)
        for protocol in ("__cuda_array_interface__", "__array_interface__"):
            if shape is None:
                interface = getattr(x, protocol, None)
                shape = interface.get("shape") if isinstance(interface, dict) else None
    except Exception as e:  # noqa: BLE001 - a property of the operand's raising
        raise _raised(name, e) from e
    if shape is None:
        import numpy as np

        try:
            shape = np.shape(x)
        except Exception as e:  # a ragged nested list, or the object's own __array__ failing: not an operand
            raise InvalidArgumentError(f"{name}: expected an array or tensor, got {type(x).__name__}: {e}") from None
    try:
        dims = tuple(_extent(e) for e in shape)
    except TypeError:
        raise InvalidArgumentError(f"{name}: expected an array or tensor, whose shape is a sequence of integers; got "
                                   f"{type(x).__name__} of shape {shown(shape)}") from None
    if any(e < 0 for e in dims):
        raise InvalidArgumentError(f"{name}: extents are never negative, got shape {shown(dims)}")
    return dims


def host_array(x, name: str):
    """A host operand as a NumPy array: NumPy's own, a DLPack producer's memory (no copy), else np.asarray's."""
    import numpy as np

    if isinstance(x, np.ma.MaskedArray):  # the kernels would read the masked elements too
        raise InvalidArgumentError(f"{name}: a masked array: cuforge reads every element (pass x.filled(value), or "
                                   f"x.data to use the masked values)")
    if isinstance(x, np.ndarray):
        return x
    try:
        if hasattr(x, "__dlpack__"):  # its own memory, where __array__ may copy
            try:
                return np.from_dlpack(x)
            except (BufferError, TypeError, ValueError, RuntimeError) as e:  # a producer breaking the protocol
                raise InvalidArgumentError(f"{name}: NumPy cannot read its host memory through __dlpack__: {e}") from e
        try:
            return np.asarray(x)
        except (TypeError, ValueError, AttributeError) as e:  # an __array_interface__ that is not the protocol's
            raise InvalidArgumentError(f"{name}: NumPy cannot read it as an array: {type(e).__name__}: {e}") from e
    except _core.Error:
        raise
    except Exception as e:  # noqa: BLE001 - the operand's protocol properties and methods are its own code
        raise _raised(name, e) from e


def _element_strides(x) -> tuple:
    """A NumPy array's strides in elements; those of its order for one without elements (whose strides NumPy
    may give as 0, which no layout has)."""
    if x.size:
        return tuple(s // x.itemsize for s in x.strides)
    dims = range(x.ndim) if x.flags.f_contiguous and not x.flags.c_contiguous else reversed(range(x.ndim))
    strides, step = [0] * x.ndim, 1
    for i in dims:
        strides[i] = step
        step *= max(x.shape[i], 1)
    return tuple(strides)


def host_descriptor(x, device: int, name: str, output: bool = False):
    """A host array described as if it already were on `device`, so that it can be checked before
    anything is copied; an ``output`` (D, which the result is copied back into) must be writable memory of
    its own: a NumPy array or a DLPack producer's (np.asarray of anything else may be a copy, which the
    result would go to and be lost)."""
    import numpy as np

    if output and not isinstance(x, np.ndarray) and not hasattr(x, "__dlpack__"):
        raise InvalidArgumentError(f"{name}: the result is copied back into a NumPy array (or a DLPack producer's "
                                   f"memory), got {type(x).__name__}: pass np.asarray(...) and read that")
    given = x
    x = host_array(x, name)
    if output and not x.flags.writeable:
        if not isinstance(given, np.ndarray):  # NumPy imports an older producer's DLPack memory read-only
            raise InvalidArgumentError(f"{name}: NumPy reads this {type(given).__name__}'s memory (through __dlpack__) "
                                       "as read-only, and the result would be copied back into it; pass a NumPy "
                                       "array or a GPU array")
        raise InvalidArgumentError(f"{name}: the NumPy array is read-only, and the result would be copied back into "
                                   "it; pass a writable array")
    try:
        dtype = to_datatype(x.dtype)
    except DataTypeError as e:
        raise DataTypeError(f"{name}: {e}") from None
    return (x.ctypes.data, dtype, x.shape, _element_strides(x), device)


def _describe(x, name: str):
    tensor_type = _torch_type()
    if tensor_type is not None and isinstance(x, tensor_type):
        if x.layout != sys.modules["torch"].strided:  # sparse or mkldnn: no dense memory to read
            raise InvalidArgumentError(f"{name}: a {x.layout} tensor: the kernels read dense (strided) memory; pass "
                                       f"x.to_dense()")
        if x.is_neg():  # memory holding v for a tensor of -v: a kernel reading the memory would get it wrong
            raise InvalidArgumentError(f"{name}: the tensor has torch's negative bit set (a view such as "
                                       f"z.conj().imag); pass x.resolve_neg()")
        return (x.data_ptr(), torch_datatype(x.dtype), x.shape, tuple(x.stride()), x.get_device())
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        import numpy as np

        try:  # the protocol's own fields (an array may have no .dtype)
            (data, read_only), shape = cai["data"], tuple(_extent(e) for e in cai["shape"])
            element = np.dtype(cai["typestr"])
            strides = cai.get("strides")
            strides = None if strides is None else tuple(_extent(s) for s in strides)
            data = operator.index(data)
            device = operator.index(x.device.id) if hasattr(x, "device") and hasattr(x.device, "id") else 0
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidArgumentError(f"{name}: its __cuda_array_interface__ is not the protocol's (a dict of data, "
                                       f"shape, typestr and strides, integers but the typestr; the array's "
                                       f"device.id an integer): {type(e).__name__}: {e}") from None
        if cai.get("mask") is not None:
            raise InvalidArgumentError(f"{name}: its __cuda_array_interface__ has a mask; masked arrays are not "
                                       "operands")
        if strides is not None and len(strides) != len(shape):
            raise InvalidArgumentError(f"{name}: its __cuda_array_interface__ gives {len(strides)} strides for "
                                       f"{len(shape)} extents")
        if any(extent < 0 for extent in shape):  # before strides are made of them
            raise InvalidArgumentError(f"{name}: extents are never negative, got shape {shape}")
        if read_only and name.startswith("D"):
            raise InvalidArgumentError(f"{name}: the array is read-only (its __cuda_array_interface__ says so), and "
                                       "the result would be written into it")
        dt = to_datatype(element)
        itemsize = element.itemsize
        if strides is None:  # C-contiguous
            strides, step = [], 1
            for extent in reversed(shape):
                strides.insert(0, step)
                step *= extent
        else:
            if any(s % itemsize for s in strides):
                raise InvalidArgumentError(f"{name}: strides {strides} are not whole elements of {itemsize} bytes")
            strides = [s // itemsize for s in strides]
        return (data, dt, shape, tuple(strides), device)
    if hasattr(x, "__array_interface__"):
        return None
    if hasattr(x, "__dlpack__"):  # JAX and other DLPack producers
        desc = _core.dlpack_descriptor(_dlpack_capsule(x, name), name)
        return None if desc[4] < 0 else desc  # host memory is staged like NumPy's
    raise InvalidArgumentError(
        f"{name}: expected a PyTorch tensor, a CuPy or JAX array (or any array with __cuda_array_interface__ or "
        f"__dlpack__), or a NumPy array; got {type(x).__name__}"
    )


def _dlpack_capsule(x, name: str):
    """The capsule of ``x.__dlpack__()``: the versioned one (DLPack 1.0, whose flags say whether the memory is
    read-only), else the unversioned one of older producers; the producer's refusal named."""
    try:
        try:  # the versioned capsule first: only it says whether the memory is read-only
            return x.__dlpack__(max_version=(1, 0))
        except (TypeError, BufferError):  # a producer of the unversioned protocol only
            return x.__dlpack__()
    except (TypeError, AttributeError, BufferError, ValueError) as e:  # its refusal, or no protocol's __dlpack__
        raise InvalidArgumentError(f"{name}: its __dlpack__() exports no DLPack capsule: {type(e).__name__}: {e}") from e


def stage(x, name: str, device: int, stream: int, copy_in: bool):
    """A device copy of host array `x` for one run on `stream` (its contents copied in when `copy_in`):
    (descriptor, buffer, the host array). The buffer is freed on the stream when dropped, after the work
    queued there by then: keep it until the run that reads it is queued (and D's until it is copied back)."""
    x = host_array(x, name)
    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        raise InvalidArgumentError(
            f"{name}: a strided NumPy view cannot be copied to the GPU as is; pass np.ascontiguousarray(...)"
        )
    buf = DeviceBuffer(device, x.nbytes, stream)
    if copy_in:
        buf.copy_from_host(x.ctypes.data, x.nbytes)
    return (buf.data, to_datatype(x.dtype), x.shape, _element_strides(x), device), buf, x


def completion(copies):
    """A run's completion over its staged copies [(operand name, buffer, host array)]: copies each D (the
    names starting with D) back to its host array, and holds every copy until then (each is freed on the
    run's stream once dropped). None when nothing was staged."""
    if not copies:
        return None

    def copy_back():
        for name, buf, host in copies:
            if name.startswith("D"):
                buf.copy_to_host(host.ctypes.data, host.nbytes)

    return copy_back


def _stream_handle(handle, name: str) -> int:
    """A stream handle as CUDA takes one: an int (not a bool) of 0 or more, 64 bits."""
    if not isinstance(handle, int) or isinstance(handle, bool) or not 0 <= handle < 2**64:
        raise InvalidArgumentError(f"{name}: expected a stream handle (an int of 0 or more, 64 bits), got "
                                   f"{shown(handle)}")
    return handle


def current_stream(operands, stream) -> int:
    """The stream to run on: the one given, else the current stream of the first device array's
    framework (torch or CuPy), else the legacy default stream (0).

    A stream is given as its handle (an int), as an object of the CUDA stream protocol
    (``__cuda_stream__()`` returning (0, handle): cuda.core, recent CuPy and cuda-python), as a
    torch.cuda.Stream (``cuda_stream``) or CuPy stream (``ptr``), or as cuda-python's ``CUstream`` or
    ``cudaStream_t`` (``int()`` of it: the CUTLASS Python interface's ``stream=cuda.CUstream(0)``)."""
    if stream is not None:
        try:
            return _given_stream(stream)
        except _core.Error:
            raise
        except Exception as e:  # noqa: BLE001 - the stream object's protocol is its own code
            raise _raised("stream", e) from e
    tensor_type = _torch_type()
    cupy = sys.modules.get("cupy")
    for x in operands:
        if tensor_type is not None and isinstance(x, tensor_type):
            if x.get_device() < 0:
                continue
            torch = sys.modules["torch"]
            get_raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            if get_raw is not None:
                return get_raw(x.get_device())
            return torch.cuda.current_stream(x.device).cuda_stream
        if cupy is not None and isinstance(x, cupy.ndarray):
            return cupy.cuda.get_current_stream().ptr
    return 0


def _given_stream(stream) -> int:
    """The handle of a stream given as current_stream() takes them."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return _stream_handle(stream, "stream")
    # torch.cuda.Stream's attribute before the protocol (recent torch has both), in the order the core's one-call
    # path reads them (operands.cpp's stream_object_handle): one object, one stream on either path.
    if hasattr(stream, "cuda_stream"):
        return _stream_handle(stream.cuda_stream, "stream.cuda_stream")
    if hasattr(stream, "__cuda_stream__"):
        if not callable(stream.__cuda_stream__):
            raise InvalidArgumentError(f"stream.__cuda_stream__: expected a method returning (0, handle), got "
                                       f"{shown(stream.__cuda_stream__)}")
        protocol = stream.__cuda_stream__()
        if not isinstance(protocol, tuple) or len(protocol) != 2 or type(protocol[0]) is not int or protocol[0] != 0:
            raise InvalidArgumentError(f"stream.__cuda_stream__(): expected (0, handle), got {shown(protocol)}")
        return _stream_handle(protocol[1], "stream.__cuda_stream__()")
    if hasattr(stream, "ptr"):  # cupy.cuda.Stream
        return _stream_handle(stream.ptr, "stream.ptr")
    kind = type(stream)
    if kind.__module__.split(".")[0] == "cuda" and kind.__name__ in ("CUstream", "cudaStream_t"):
        return _stream_handle(int(stream), "stream")
    raise InvalidArgumentError(
        f"stream: expected an integer handle, a torch.cuda.Stream, a cupy Stream or a CUDA Python stream, "
        f"got {type(stream).__name__}"
    )
