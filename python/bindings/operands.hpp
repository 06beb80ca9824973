// What the bindings of cuforge._core share: operands and results between Python and the core.
#pragma once

#include <fmt/format.h>
#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cuforge/compile/compiler.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/core/tensor.hpp"
#include "log_sink.hpp"

namespace cuforge::python {

namespace nb = nanobind;

// An operand as the Python layer describes it: (data_ptr, dtype, shape, strides, device), or None
// (an empty TensorRef). `name` names it in errors.
TensorRef to_tensor_ref(nb::handle h, const char* name);
std::vector<TensorRef> tensor_refs(const std::vector<nb::handle>& list, const char* name);

// A CUDA torch.Tensor read directly (what the Python layer's describe() reads, without the
// interpreter's work), or nullopt when `h` is anything else: another kind of array, a CPU tensor,
// an element type cuforge has no name for, torch not imported. Callers then take the general path.
std::optional<TensorRef> torch_tensor_ref(nb::handle h);
// The stream a run on torch tensors of `device` takes, as cuforge.arrays.current_stream decides:
// given None, torch's current stream there; an int (not a bool) of 64 bits, that handle; an object
// of the CUDA stream protocol, a torch.cuda.Stream or CUDA Python's CUstream, its handle. nullopt
// for anything else (a CuPy stream read through `ptr`, a negative int, a malformed protocol; or a
// torch that cannot say), which the Python layer then takes and names.
std::optional<uintptr_t> run_stream(nb::handle stream, int device);
// A list or tuple of CUDA torch tensors, each read as torch_tensor_ref reads one (nullopt for any
// other sequence or element).
std::optional<std::vector<TensorRef>> torch_tensor_refs(nb::handle sequence);
// Torch's N, C, H, W tensors in channels_last memory as the N, H, W, C tensors a convolution runs
// on, decided as cuforge.op.conv2d's _nhwc_views decides: the 4-D refs are permuted (0, 2, 3, 1)
// unless one of them is plain-contiguous (then all of them are NHWC already); refs of another rank
// are left as they are. False, with nothing changed, where the Python layer decides (and names the
// error): plain and channels_last tensors mixed, or a 4-D tensor without elements.
bool torch_nhwc_views(std::initializer_list<TensorRef*> refs);
// The descriptor (data_ptr, dtype, shape, strides, device) of the tensor a DLPack capsule holds (an array's
// __dlpack__() result), or an InvalidArgumentError naming the operand `name` (dlpack.cpp).
nb::tuple dlpack_descriptor(nb::handle capsule, const char* name);
// A real number as Python writes one: a float or an int, not a bool or an array (nullopt otherwise).
std::optional<double> python_real(nb::handle x);

// A data member of a bound struct, whose Python setter refuses a value of the wrong kind with an
// InvalidArgumentError that says which field (`label`) and what it takes (nanobind's own conversion
// error names neither).
template <class Class, class Value>
Value member_type(Value Class::*);

// The name of `value` where it is another library's member of an enum of E's name (the CUTLASS Python
// interface's enums are cutlass_library's, whose members carry cuforge's names; an enum of another kind,
// cuforge's or theirs, is no spelling of one), else an invalid object.
template <class E>
nb::object foreign_member_name(nb::handle value) {
  nb::handle type = value.type(), ours = nb::type<E>();
  nb::object module = nb::getattr(type, "__module__", nb::none());
  if (!nb::hasattr(value, "name") || !nb::isinstance<nb::str>(module) ||
      std::string_view(nb::borrow<nb::str>(module).c_str()).substr(0, 7) == "cuforge" ||
      !nb::getattr(type, "__name__", nb::none()).equal(ours.attr("__name__")))
    return {};
  nb::object name = value.attr("name");
  return nb::isinstance<nb::str>(name) ? name : nb::object();
}

// A member of the bound enum E named as `value` is (foreign_member_name), or false.
template <class E>
bool enum_of_name(nb::handle value, E& out) {
  nb::object name = foreign_member_name<E>(value);
  if (!name.is_valid()) return false;
  nb::object members = nb::type<E>().attr("__members__");  // a mappingproxy
  PyObject* member = PyObject_GetItem(members.ptr(), name.ptr());
  if (!member) {
    PyErr_Clear();
    return false;
  }
  return nb::try_cast(nb::steal(member), out);
}

// Where `value` is another library's member of an enum of E's name that E lacks: what to say of it (the members
// E has), else "".
template <class E>
std::string foreign_member_lacked(nb::handle value) {
  nb::object name = foreign_member_name<E>(value);
  if (!name.is_valid()) return "";
  nb::handle ours = nb::type<E>();
  std::string has;
  for (nb::handle member : nb::iter(ours.attr("__members__")))
    has += (has.empty() ? "" : ", ") + std::string(nb::str(member).c_str());
  return fmt::format("{}.{} is none of cuforge's (cuforge.{} has {})", nb::str(ours.attr("__name__")).c_str(),
                     nb::str(name).c_str(), nb::str(ours.attr("__name__")).c_str(), has);
}

// Whether a value given for integers is, or holds, a bool (which nanobind casts to 0 or 1).
inline bool holds_bool(nb::handle value) {
  if (PyBool_Check(value.ptr())) return true;
  if (!PyList_Check(value.ptr()) && !PyTuple_Check(value.ptr())) return false;
  for (nb::handle item : value)
    if (PyBool_Check(item.ptr())) return true;
  return false;
}

// A value as an error message shows it (cuforge.messages.shown: its repr, or what it is where Python cannot print it).
inline std::string shown(nb::handle value) {
  return nb::cast<std::string>(nb::module_::import_("cuforge.messages").attr("shown")(value));
}

template <class T>
constexpr bool kIntegers = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T, size_t N>
constexpr bool kIntegers<std::array<T, N>> = kIntegers<T>;

// `if_none`: what None sets (the CUTLASS Python interface's "automatic"), where None is taken. Integers are
// not bools (True is no stage count).
template <auto Member, class Bound>
void def_checked(Bound& cls, const char* name, const char* label, const char* takes, const char* doc = "",
                 std::optional<decltype(member_type(Member))> if_none = std::nullopt) {
  using Struct = typename Bound::Type;
  using Value = decltype(member_type(Member));
  cls.def_prop_rw(
      name, [](const Struct& s) -> Value { return s.*Member; },
      [label, takes, if_none](Struct& s, nb::handle value) {
        if (value.is_none() && if_none) {
          s.*Member = *if_none;
          return;
        }
        Value v{};
        bool cast = !(kIntegers<Value> && holds_bool(value)) && nb::try_cast(value, v);
        if constexpr (std::is_enum_v<Value>) {
          cast = cast || enum_of_name(value, v);
          if (!cast)
            if (std::string lacked = foreign_member_lacked<Value>(value); !lacked.empty())
              throw InvalidArgumentError(std::string(label) + ": " + lacked);
        }
        if (!cast)
          throw InvalidArgumentError(std::string(label) + ": expected " + takes + ", got " + shown(value));
        if constexpr (kIntegers<Value>) {  // extents, counts and stages: none is negative
          bool negative = false;
          if constexpr (std::is_integral_v<Value>) {
            negative = v < 0;
          } else {
            for (auto x : v) negative = negative || x < 0;
          }
          if (negative)
            throw InvalidArgumentError(std::string(label) + ": expected " + takes + " of 0 or more, got " +
                                       shown(value));
        }
        s.*Member = std::move(v);
      },
      nb::for_setter(nb::arg("value").none()), doc);
}

// A str of UTF-8 bytes, any invalid sequence replaced (U+FFFD): compiler output in another encoding
// must not turn an error into a UnicodeDecodeError.
nb::object text(std::string_view bytes);

// A path as Python's os.fsdecode gives it (bytes that are not UTF-8 as surrogates, which os.fsencode
// turns back into the same bytes).
nb::object path_text(const std::filesystem::path& path);

// A compile result as a dict: name, key, library, source, cache_hit, seconds.
nb::dict compile_result(const compile::CompileResult& r);

// Builds a plan's kernels (op::BuiltKernel) with the GIL released; each as compile_result's dict, with the
// candidate chosen for its class as "chosen".
template <class Build>
nb::list compile_results(Build&& build) {
  decltype(build()) built;
  {
    WithoutGil released;
    built = build();
  }
  nb::list out;
  for (const auto& r : built) {
    nb::dict d = compile_result(r);
    d["chosen"] = nb::cast(r.candidate);
    out.append(d);
  }
  return out;
}

// alignment_A/B/C as Python gives them (None: as the sizes allow), and as the core takes them (0).
using Alignments = std::array<std::optional<int>, 3>;
std::array<int, 3> caps(const Alignments& alignments);

using Pair = std::array<int64_t, 2>;
using ConvExtents = std::array<int64_t, 7>;  // N, H, W, C, K, R, S

}  // namespace cuforge::python
