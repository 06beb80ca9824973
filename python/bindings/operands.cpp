#include "operands.hpp"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>

#include <string>
#include <string_view>
#include <utility>

#include "cuforge/core/error.hpp"

namespace cuforge::python {

TensorRef to_tensor_ref(nb::handle h, const char* name) {
  TensorRef t;
  if (h.is_none()) return t;
  PyObject* tuple = h.ptr();
  if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != 5) throw nb::type_error("operand descriptor: bad tuple");
  t.data = reinterpret_cast<const void*>(PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(tuple, 0)));
  t.dtype = nb::cast<DataType>(nb::handle(PyTuple_GET_ITEM(tuple, 1)));
  PyObject* shape = PyTuple_GET_ITEM(tuple, 2);
  PyObject* strides = PyTuple_GET_ITEM(tuple, 3);
  // A torch tensor's stride() passes through as it is: a subclass may return a list.
  if (!PyTuple_Check(shape) || !PyTuple_Check(strides))
    throw InvalidArgumentError(std::string(name) + ": its shape and strides must be tuples of integers, got " +
                               Py_TYPE(shape)->tp_name + " and " + Py_TYPE(strides)->tp_name);
  Py_ssize_t rank = PyTuple_GET_SIZE(shape);
  if (rank > TensorRef::kMaxRank || PyTuple_GET_SIZE(strides) != rank)
    throw InvalidArgumentError(std::string(name) + ": expected at most " + std::to_string(TensorRef::kMaxRank) +
                               " dimensions (a matrix, a batch of matrices, or an NHWC tensor), got " +
                               std::to_string(rank));
  t.rank = int(rank);
  for (Py_ssize_t i = 0; i < rank; ++i) {
    t.shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    t.strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
  }
  const long device = PyLong_AsLong(PyTuple_GET_ITEM(tuple, 4));
  if (!PyErr_Occurred() && (device < -1 || device > INT32_MAX))
    throw InvalidArgumentError(std::string(name) + ": device " + std::to_string(device) + " is not a device index");
  t.device = int(device);
  if (PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw nb::python_error();
    PyErr_Clear();
    throw InvalidArgumentError(std::string(name) + ": an extent, stride or address beyond 64 bits");
  }
  return t;
}

nb::object text(std::string_view bytes) {
  nb::object str = nb::steal(PyUnicode_DecodeUTF8(bytes.data(), Py_ssize_t(bytes.size()), "replace"));
  if (!str.is_valid()) throw nb::python_error();
  return str;
}

nb::object path_text(const std::filesystem::path& path) {
  const std::string& bytes = path.native();
  nb::object str = nb::steal(PyUnicode_DecodeFSDefaultAndSize(bytes.data(), Py_ssize_t(bytes.size())));
  if (!str.is_valid()) throw nb::python_error();
  return str;
}

std::vector<TensorRef> tensor_refs(const std::vector<nb::handle>& list, const char* name) {
  std::vector<TensorRef> out;
  for (size_t i = 0; i < list.size(); ++i) out.push_back(to_tensor_ref(list[i], name));
  return out;
}

namespace {

// What the fast path needs of torch, looked up once torch has been imported (never importing it).
struct Torch {
  PyTypeObject* tensor = nullptr;
  nb::object current_raw_stream;                         // torch._C._cuda_getCurrentRawStream, or None
  std::vector<std::pair<PyObject*, DataType>> dtypes;  // torch.dtype objects (singletons) and their types
};

// Null where torch is not imported, blocked (None in sys.modules, as `sys.modules["torch"] = None`
// does) or not yet whole (imported part way): the Python layer then reads the operands.
const Torch* torch() {
  static const Torch* found = nullptr;  // the GIL is held; never destroyed (used until exit)
  if (found) return found;
  PyObject* module = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed
  if (!module || module == Py_None) return nullptr;
  auto t = std::make_unique<Torch>();
  try {
    nb::handle torch_module(module);
    nb::object tensor = torch_module.attr("Tensor");
    if (!PyType_Check(tensor.ptr())) return nullptr;
    t->tensor = reinterpret_cast<PyTypeObject*>(tensor.release().ptr());
    t->current_raw_stream = nb::getattr(torch_module.attr("_C"), "_cuda_getCurrentRawStream", nb::none());
    // The table of cuforge.dtypes, so that torch's element types are named in one place.
    nb::dict table = nb::cast<nb::dict>(nb::module_::import_("cuforge.dtypes").attr("torch_table")(torch_module));
    for (auto [dtype, type] : table) t->dtypes.emplace_back(dtype.inc_ref().ptr(), nb::cast<DataType>(type));
  } catch (const nb::python_error&) {
    return nullptr;  // what was taken is leaked (a few references): this happens at most while torch imports
  }
  found = t.release();
  return found;
}

// A new reference, or null with the Python error cleared.
nb::object call_method(nb::handle h, PyObject* name) {
  PyObject* r = PyObject_CallMethodNoArgs(h.ptr(), name);
  if (!r) PyErr_Clear();
  return nb::steal(r);
}

nb::object get_attribute(nb::handle h, PyObject* name) {
  PyObject* r = PyObject_GetAttr(h.ptr(), name);
  if (!r) PyErr_Clear();
  return nb::steal(r);
}

bool read_extents(PyObject* tuple, std::array<int64_t, TensorRef::kMaxRank>& out, int rank) {
  if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != rank) return false;
  for (int i = 0; i < rank; ++i) out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, i));
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// torch's is_contiguous for a non-empty 4-D tensor in the memory format whose dimensions, innermost
// first, are `order` (extents of 1 take any stride).
bool dense_in_order(const TensorRef& t, std::array<int, 4> order) {
  int64_t expected = 1;
  for (int d : order) {
    if (t.shape[d] == 1) continue;
    if (t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

}  // namespace

std::optional<TensorRef> torch_tensor_ref(nb::handle h) {
  static PyObject* const data_ptr = PyUnicode_InternFromString("data_ptr");
  static PyObject* const stride = PyUnicode_InternFromString("stride");
  static PyObject* const get_device = PyUnicode_InternFromString("get_device");
  static PyObject* const shape = PyUnicode_InternFromString("shape");
  static PyObject* const dtype = PyUnicode_InternFromString("dtype");
  static PyObject* const is_neg = PyUnicode_InternFromString("is_neg");
  const Torch* t = torch();
  if (!t || !PyObject_TypeCheck(h.ptr(), t->tensor)) return std::nullopt;
  TensorRef ref;
  nb::object device = call_method(h, get_device);
  if (!device.is_valid() || !PyLong_Check(device.ptr())) return std::nullopt;
  const long index = PyLong_AsLong(device.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  if (index < 0 || index > INT32_MAX) return std::nullopt;
  ref.device = int(index);
  // torch's negative bit (the imaginary part of a conjugate view, z.conj().imag): memory holding x for a
  // tensor of -x, which a kernel reading the memory would get wrong. The Python layer refuses it.
  if (nb::object negative = call_method(h, is_neg); !negative.is_valid() || negative.ptr() != Py_False)
    return std::nullopt;
  nb::object type = get_attribute(h, dtype);
  if (!type.is_valid()) return std::nullopt;
  auto known = std::find_if(t->dtypes.begin(), t->dtypes.end(), [&](const auto& e) { return e.first == type.ptr(); });
  if (known == t->dtypes.end()) return std::nullopt;
  ref.dtype = known->second;
  nb::object sizes = get_attribute(h, shape), steps = call_method(h, stride), ptr = call_method(h, data_ptr);
  if (!sizes.is_valid() || !steps.is_valid() || !ptr.is_valid() || !PyTuple_Check(sizes.ptr())) return std::nullopt;
  const Py_ssize_t rank = PyTuple_GET_SIZE(sizes.ptr());
  if (rank > TensorRef::kMaxRank || !read_extents(sizes.ptr(), ref.shape, int(rank)) ||
      !read_extents(steps.ptr(), ref.strides, int(rank)))
    return std::nullopt;
  ref.rank = int(rank);
  ref.data = PyLong_AsVoidPtr(ptr.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return ref;
}

namespace {

// A Python int (not a bool) of 64 bits as a stream handle; nullopt for anything else.
std::optional<uintptr_t> stream_handle(PyObject* x) {
  if (!PyLong_Check(x) || PyBool_Check(x)) return std::nullopt;
  const unsigned long long handle = PyLong_AsUnsignedLongLong(x);
  if (PyErr_Occurred()) {  // negative, or 65 bits and more
    PyErr_Clear();
    return std::nullopt;
  }
  return uintptr_t(handle);
}

// The handle of a stream object of the kinds read here, as cuforge.arrays.current_stream reads it:
// torch's `cuda_stream`, the CUDA stream protocol (__cuda_stream__() returning (0, handle)), CUDA
// Python's CUstream and cudaStream_t (int() of them). nullopt for anything else.
std::optional<uintptr_t> stream_object_handle(nb::handle stream) {
  static PyObject* const protocol = PyUnicode_InternFromString("__cuda_stream__");
  static PyObject* const cuda_stream = PyUnicode_InternFromString("cuda_stream");
  static PyObject* const module = PyUnicode_InternFromString("__module__");
  static PyObject* const name = PyUnicode_InternFromString("__name__");
  // torch.cuda.Stream's attribute first: the protocol, which recent torch offers too, is a Python call.
  if (const nb::object handle = get_attribute(stream, cuda_stream); handle.is_valid())
    return stream_handle(handle.ptr());
  if (const nb::object method = get_attribute(stream, protocol); method.is_valid()) {
    if (!PyCallable_Check(method.ptr())) return std::nullopt;
    PyObject* r = PyObject_CallNoArgs(method.ptr());
    if (!r) {
      PyErr_Clear();
      return std::nullopt;
    }
    const nb::object pair = nb::steal(r);
    if (!PyTuple_Check(pair.ptr()) || PyTuple_GET_SIZE(pair.ptr()) != 2) return std::nullopt;
    PyObject* version = PyTuple_GET_ITEM(pair.ptr(), 0);
    if (!PyLong_Check(version) || PyBool_Check(version) || PyLong_AsLong(version) != 0) {
      PyErr_Clear();
      return std::nullopt;
    }
    return stream_handle(PyTuple_GET_ITEM(pair.ptr(), 1));
  }
  const nb::handle type(reinterpret_cast<PyObject*>(Py_TYPE(stream.ptr())));
  const nb::object type_module = get_attribute(type, module), type_name = get_attribute(type, name);
  if (!type_module.is_valid() || !type_name.is_valid() || !PyUnicode_Check(type_module.ptr()) ||
      !PyUnicode_Check(type_name.ptr()))
    return std::nullopt;
  const char* from_text = PyUnicode_AsUTF8(type_module.ptr());
  const char* kind_text = PyUnicode_AsUTF8(type_name.ptr());
  if (!from_text || !kind_text) {
    PyErr_Clear();
    return std::nullopt;
  }
  const std::string_view from = from_text, kind = kind_text;
  if (from.substr(0, from.find('.')) != "cuda" || (kind != "CUstream" && kind != "cudaStream_t")) return std::nullopt;
  PyObject* value = PyNumber_Long(stream.ptr());
  if (!value) {
    PyErr_Clear();
    return std::nullopt;
  }
  return stream_handle(nb::steal(value).ptr());
}

}  // namespace

std::optional<uintptr_t> run_stream(nb::handle stream, int device) {
  if (!stream.is_none()) {
    if (auto handle = stream_handle(stream.ptr())) return handle;
    return stream_object_handle(stream);
  }
  const Torch* t = torch();
  if (!t || t->current_raw_stream.is_none()) return std::nullopt;
  PyObject* r = PyObject_CallOneArg(t->current_raw_stream.ptr(), nb::int_(device).ptr());
  if (!r) {
    PyErr_Clear();
    return std::nullopt;
  }
  return stream_handle(nb::steal(r).ptr());
}

std::optional<std::vector<TensorRef>> torch_tensor_refs(nb::handle sequence) {
  if (!PyList_Check(sequence.ptr()) && !PyTuple_Check(sequence.ptr())) return std::nullopt;
  // A tuple of the items (a new one for a list): torch's accessors run Python code (a subclass's or a
  // __torch_function__'s), which may change the list and free its items while they are read.
  nb::object items = nb::steal(PySequence_Tuple(sequence.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  const Py_ssize_t n = PyTuple_GET_SIZE(items.ptr());
  PyObject** item = PySequence_Fast_ITEMS(items.ptr());
  std::vector<TensorRef> refs;
  refs.reserve(size_t(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    auto ref = torch_tensor_ref(item[i]);
    if (!ref) return std::nullopt;
    refs.push_back(*ref);
  }
  return refs;
}

bool torch_nhwc_views(std::initializer_list<TensorRef*> refs) {
  bool channels_last = false, plain = false;
  for (const TensorRef* t : refs) {
    if (t->rank != 4) continue;
    if (std::any_of(t->shape.begin(), t->shape.begin() + 4, [](int64_t e) { return e == 0; })) return false;
    const bool cl = dense_in_order(*t, {1, 3, 2, 0}), rm = dense_in_order(*t, {3, 2, 1, 0});
    channels_last |= cl && !rm;
    plain |= rm && !cl;
  }
  if (channels_last && plain) return false;
  if (plain) return true;
  for (TensorRef* t : refs) {
    if (t->rank != 4) continue;
    const TensorRef nchw = *t;
    for (int i = 0; i < 4; ++i) {
      constexpr int kFrom[4] = {0, 2, 3, 1};
      t->shape[i] = nchw.shape[kFrom[i]];
      t->strides[i] = nchw.strides[kFrom[i]];
    }
  }
  return true;
}

std::optional<double> python_real(nb::handle x) {
  if (PyFloat_CheckExact(x.ptr())) return PyFloat_AS_DOUBLE(x.ptr());
  if (!PyLong_CheckExact(x.ptr())) return std::nullopt;
  const double v = PyLong_AsDouble(x.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return v;
}

nb::dict compile_result(const compile::CompileResult& r) {
  nb::dict d;
  d["name"] = r.entry.name;
  d["key"] = r.entry.key;
  d["library"] = path_text(r.entry.library());
  d["source"] = path_text(r.entry.source());
  d["cache_hit"] = r.cache_hit;
  d["seconds"] = r.seconds;
  return d;
}

std::array<int, 3> caps(const Alignments& alignments) {
  std::array<int, 3> out{};
  for (int i = 0; i < 3; ++i) out[i] = alignments[i].value_or(0);
  return out;
}

}  // namespace cuforge::python
