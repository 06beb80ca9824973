#include "operands.hpp"

#include <nanobind/stl/string.h>

#include <string>

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
  t.device = int(PyLong_AsLong(PyTuple_GET_ITEM(tuple, 4)));
  if (PyErr_Occurred()) throw nb::python_error();
  return t;
}

std::vector<TensorRef> tensor_refs(const std::vector<nb::handle>& list, const char* name) {
  std::vector<TensorRef> out;
  for (size_t i = 0; i < list.size(); ++i) out.push_back(to_tensor_ref(list[i], name));
  return out;
}

nb::dict compile_result(const compile::CompileResult& r) {
  nb::dict d;
  d["name"] = r.entry.name;
  d["key"] = r.entry.key;
  d["library"] = r.entry.library().string();
  d["source"] = r.entry.source().string();
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
