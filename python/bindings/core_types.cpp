#include "core_types.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>

#include "cuforge/cuforge.hpp"
#include "operands.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace cuforge::python {
namespace {

// A copy of a tile description and of its attributes (deep ones with `memo`, as copy.deepcopy asks).
// A TileDescription's fields, as its properties name them.
constexpr const char* kTileFields[] = {"threadblock_shape", "warp_count", "stages", "cluster_shape", "kernel_schedule",
                                       "epilogue_schedule", "tile_scheduler", "swap_ab"};

nb::object tile_copy(nb::handle self, nb::handle memo) {
  nb::object out = nb::cast(nb::cast<TileDescription>(self));
  nb::object attributes = nb::getattr(self, "__dict__");
  if (!memo.is_none()) attributes = nb::module_::import_("copy").attr("deepcopy")(attributes, memo);
  nb::getattr(out, "__dict__").attr("update")(attributes);
  return out;
}

}  // namespace

void bind_types(nb::module_& m) {
  nb::enum_<DataType>(m, "DataType", "Element types.")
      .value("f16", DataType::f16).value("bf16", DataType::bf16).value("tf32", DataType::tf32)
      .value("f32", DataType::f32).value("f64", DataType::f64).value("s8", DataType::s8)
      .value("u8", DataType::u8).value("s32", DataType::s32).value("e4m3", DataType::e4m3)
      .value("e5m2", DataType::e5m2).value("void", DataType::void_);
  nb::enum_<Layout>(m, "LayoutType", "Matrix layouts, and the NHWC layout of convolution tensors.")
      .value("RowMajor", Layout::RowMajor).value("ColumnMajor", Layout::ColumnMajor)
      .value("TensorNHWC", Layout::TensorNHWC);
  nb::enum_<OpcodeClass>(m, "OpcodeClass", "Tensor cores or CUDA cores.")
      .value("TensorOp", OpcodeClass::TensorOp).value("Simt", OpcodeClass::Simt);
  nb::enum_<MathOperation>(m, "MathOperation", "How products are computed.")
      .value("multiply_add", MathOperation::MultiplyAdd)
      .value("multiply_add_fast_f32", MathOperation::MultiplyAddFastF32)
      .value("multiply_add_saturate", MathOperation::MultiplyAddSaturate)
      .value("multiply_add_fast_bf16", MathOperation::MultiplyAddFastBF16)
      .value("multiply_add_fast_f16", MathOperation::MultiplyAddFastF16)
      .value("multiply_add_fast_accum", MathOperation::MultiplyAddFastAccum)
      .value("multiply_add_mixed_input_upcast", MathOperation::MultiplyAddMixedInputUpcast);
  nb::enum_<KernelSchedule>(m, "KernelScheduleType", "Mainloop schedules.")
      .value("Multistage", KernelSchedule::Multistage)
      .value("TmaWarpSpecializedCooperative", KernelSchedule::TmaWarpSpecializedCooperative)
      .value("TmaWarpSpecializedPingpong", KernelSchedule::TmaWarpSpecializedPingpong)
      .value("TmaWarpSpecialized", KernelSchedule::TmaWarpSpecialized)
      .value("ScheduleAuto", KernelSchedule::Auto);
  nb::enum_<EpilogueSchedule>(m, "EpilogueScheduleType", "Epilogue schedules.")
      .value("Default", EpilogueSchedule::Default)
      .value("TmaWarpSpecialized", EpilogueSchedule::TmaWarpSpecialized)
      .value("TmaWarpSpecializedCooperative", EpilogueSchedule::TmaWarpSpecializedCooperative)
      .value("NoSmemWarpSpecialized", EpilogueSchedule::NoSmemWarpSpecialized)
      .value("ScheduleAuto", EpilogueSchedule::Auto);
  nb::enum_<TileScheduler>(m, "TileSchedulerType", "How output tiles are assigned to CTAs.")
      .value("Default", TileScheduler::Default).value("StreamK", TileScheduler::StreamK)
      .value("Identity1", TileScheduler::Identity1).value("Identity2", TileScheduler::Identity2)
      .value("Identity4", TileScheduler::Identity4).value("Horizontal", TileScheduler::Horizontal)
      .value("Persistent", TileScheduler::Default);  // the seed's name for SM90's default scheduler
  nb::enum_<Decomposition>(m, "Decomposition", "How K-heavy work is divided.")
      .value("Heuristic", Decomposition::Heuristic).value("DataParallel", Decomposition::DataParallel)
      .value("SplitK", Decomposition::SplitK).value("StreamK", Decomposition::StreamK)
      .value("ParallelSplitK", Decomposition::ParallelSplitK);
  nb::enum_<IteratorAlgorithm>(m, "IteratorAlgorithm",
                               "How a convolution kernel walks its activation: CUTLASS's optimized iterators, or "
                               "fprop's fixed-channel ones (inputs of exactly one vector of channels).")
      .value("Optimized", IteratorAlgorithm::Optimized).value("FixedChannels", IteratorAlgorithm::FixedChannels);
  nb::enum_<KernelKind>(m, "KernelKind",
                        "What a kernel computes: one GEMM (or a batch), a group of GEMMs, or a 2-D convolution "
                        "(forward, the input's gradient, the filters' gradient).")
      .value("Gemm", KernelKind::Gemm).value("Grouped", KernelKind::Grouped)
      .value("Conv2dFprop", KernelKind::Conv2dFprop).value("Conv2dDgrad", KernelKind::Conv2dDgrad)
      .value("Conv2dWgrad", KernelKind::Conv2dWgrad);
  nb::enum_<Activation>(m, "Activation", "Elementwise functions an epilogue fuses.")
      .value("identity", Activation::identity).value("relu", Activation::relu)
      .value("leaky_relu", Activation::leaky_relu).value("tanh", Activation::tanh)
      .value("sigmoid", Activation::sigmoid).value("silu", Activation::silu)
      .value("hardswish", Activation::hardswish).value("gelu", Activation::gelu);
  nb::enum_<select::FirstRun>(m, "FirstRun",
                              "What a run does when its class's kernel is not built yet: wait for it, or run on "
                              "a kernel already built (or a quick SM80 one) while it builds in the background.")
      .value("wait", select::FirstRun::wait).value("fallback", select::FirstRun::fallback);

  nb::class_<library::MathInstruction>(m, "MathInstruction",
                                       "The instruction a plan's kernels multiply with (one tensor-core MMA or "
                                       "SIMT fused multiply-add).")
      .def_ro("instruction_shape", &library::MathInstruction::shape,
              "M, N, K of one instruction (SM90: the smallest wgmma; the kernels take N from the tile)")
      .def_ro("element_a", &library::MathInstruction::a)
      .def_ro("element_b", &library::MathInstruction::b)
      .def_ro("element_accumulator", &library::MathInstruction::accumulator)
      .def_ro("opcode_class", &library::MathInstruction::opclass)
      .def_ro("math_operation", &library::MathInstruction::math)
      // Immutable: a copy of a tile description shares its instruction.
      .def("__copy__", [](nb::handle self) { return nb::borrow(self); })
      .def("__deepcopy__", [](nb::handle self, nb::handle) { return nb::borrow(self); }, "memo"_a)
      .def("__repr__", [](const library::MathInstruction& i) {
        return "MathInstruction(" + std::to_string(i.shape[0]) + "x" + std::to_string(i.shape[1]) + "x" +
               std::to_string(i.shape[2]) + ", " + std::string(to_string(i.a)) + " x " + std::string(to_string(i.b)) +
               " -> " + std::string(to_string(i.accumulator)) + ", " + std::string(to_string(i.opclass)) + ")";
      });

  // A math instruction as its row of cuforge's table, and back: how one is pickled (cuforge.seed).
  m.def("_math_instruction_row", [](const library::MathInstruction& i) {
    const auto& table = library::math_instructions();
    for (size_t row = 0; row < table.size(); ++row)
      if (table[row] == i) return row;
    throw InvalidArgumentError("MathInstruction: not one of cuforge's instructions");
  });
  m.def("_math_instruction", [](size_t row) {
    const auto& table = library::math_instructions();
    if (row >= table.size()) throw InvalidArgumentError("MathInstruction: no such row of cuforge's instructions");
    return table[row];
  });

  auto tile = nb::class_<TileDescription>(m, "TileDescription", nb::dynamic_attr(),
                              "How a kernel tiles the problem and schedules its work.")
      // The CUTLASS Python interface's constructor, its arguments in its order; each one given goes
      // through its checked property, None keeps cuforge's default (stages 0: as many as fit, on SM90;
      // automatic schedules). math_instruction (the interface requires one) is kept as an attribute.
      .def("__init__",
           [](nb::pointer_and_handle<TileDescription> self, nb::handle threadblock_shape, nb::handle stages,
              nb::handle warp_count, nb::handle math_instruction, nb::handle cluster_shape,
              nb::handle kernel_schedule, nb::handle epilogue_schedule, nb::handle tile_scheduler,
              nb::handle swap_ab) {
             new (self.p) TileDescription();
             nb::inst_mark_ready(self.h);  // the checked properties below read and write it
             const std::pair<const char*, nb::handle> given[] = {
                 {"threadblock_shape", threadblock_shape}, {"stages", stages},
                 {"warp_count", warp_count}, {"cluster_shape", cluster_shape},
                 {"kernel_schedule", kernel_schedule}, {"epilogue_schedule", epilogue_schedule},
                 {"tile_scheduler", tile_scheduler}, {"swap_ab", swap_ab}};
             for (const auto& [name, value] : given)
               if (!value.is_none()) nb::setattr(self.h, name, value);
             if (!math_instruction.is_none()) {
               // cutlass_library's too (the interface's descriptions held one; a plan checks it as its own).
               const bool theirs = nb::cast<bool>(
                   nb::module_::import_("cuforge.dtypes").attr("interface_instruction")(math_instruction));
               if (!nb::isinstance<library::MathInstruction>(math_instruction) && !theirs)
                 throw InvalidArgumentError(std::string("TileDescription.math_instruction: expected a "
                                                        "cuforge.MathInstruction (a plan's tile_descriptions() name "
                                                        "theirs) or cutlass_library's, got ") +
                                            nb::inst_name(math_instruction).c_str());
               nb::setattr(self.h, "math_instruction", math_instruction);
               nb::setattr(self.h, "instruction_shape",
                           nb::list(nb::getattr(math_instruction, "instruction_shape")));
             }
           },
           "threadblock_shape"_a = nb::none(), "stages"_a = nb::none(), "warp_count"_a = nb::none(),
           "math_instruction"_a = nb::none(), "cluster_shape"_a = nb::none(), "kernel_schedule"_a = nb::none(),
           "epilogue_schedule"_a = nb::none(), "tile_scheduler"_a = nb::none(), nb::kw_only(),
           "swap_ab"_a = nb::none())
      // Copies keep the attributes a plan's tile_descriptions() adds (math_instruction, instruction_shape).
      // Pickled as its fields and attributes (the interface's were plain objects: a multiprocessing pool of
      // builds passes them), read back through the checked properties.
      .def("__getstate__",
           [](nb::handle self) {
             nb::dict fields;
             for (const char* name : kTileFields) fields[name] = nb::getattr(self, name);
             return nb::make_tuple(fields, nb::getattr(self, "__dict__"));
           })
      .def("__setstate__",
           [](nb::pointer_and_handle<TileDescription> self, nb::tuple state) {
             new (self.p) TileDescription();
             nb::inst_mark_ready(self.h);
             if (state.size() != 2 || !nb::isinstance<nb::dict>(state[0]) || !nb::isinstance<nb::dict>(state[1]))
               throw InvalidArgumentError("TileDescription: a pickled state is (fields, attributes)");
             for (auto [name, value] : nb::borrow<nb::dict>(state[0])) nb::setattr(self.h, name, value);
             nb::getattr(self.h, "__dict__").attr("update")(state[1]);
           })
      .def("__copy__", [](nb::handle self) { return tile_copy(self, nb::none()); })
      .def("__deepcopy__", [](nb::handle self, nb::handle memo) { return tile_copy(self, memo); }, "memo"_a)
      .def("__eq__", [](const TileDescription& a, const TileDescription& b) { return a == b; })
      .def("__eq__", [](nb::handle, nb::handle) { return nb::borrow(Py_NotImplemented); },  // another type
           nb::arg("other").none())
      .def("__repr__", [](const TileDescription& t) { return "TileDescription(" + t.describe() + ")"; });
  // Hashed by value, as it compares: the CUTLASS Python interface's were plain objects, hashable (by identity),
  // which scripts use as keys ({td: time for td in plan.tile_descriptions()}). One changed while a key is lost
  // to its dict, as any key hashed by a value that changes.
  tile.def("__hash__", [](const TileDescription& t) { return nb::hash(nb::str(t.describe().c_str())); });
  {
    using python::def_checked;
    constexpr const char* kThree = "three integers of 32 bits";
    def_checked<&TileDescription::threadblock_shape>(tile, "threadblock_shape", "TileDescription.threadblock_shape",
                                                     kThree, "M, N, K of one CTA's tile");
    def_checked<&TileDescription::warp_count>(tile, "warp_count", "TileDescription.warp_count", kThree,
                                              "SM80: warps along M, N, K (SM90 kernels run their schedule's warpgroups: not read)");
    def_checked<&TileDescription::stages>(tile, "stages", "TileDescription.stages", "an integer of 32 bits",
                                          "pipeline stages; 0 (or None) = as many as fit (SM90)", 0);
    def_checked<&TileDescription::cluster_shape>(tile, "cluster_shape", "TileDescription.cluster_shape", kThree,
                                                 "SM90: CTAs per cluster along M, N, K");
    def_checked<&TileDescription::kernel_schedule>(tile, "kernel_schedule", "TileDescription.kernel_schedule",
                                                   "a cuforge.KernelScheduleType", "None: automatic",
                                                   KernelSchedule::Auto);
    def_checked<&TileDescription::epilogue_schedule>(tile, "epilogue_schedule", "TileDescription.epilogue_schedule",
                                                     "a cuforge.EpilogueScheduleType", "None: automatic",
                                                     EpilogueSchedule::Auto);
    def_checked<&TileDescription::tile_scheduler>(tile, "tile_scheduler", "TileDescription.tile_scheduler",
                                                  "a cuforge.TileSchedulerType", "None: the default",
                                                  TileScheduler::Default);
    def_checked<&TileDescription::swap_ab>(tile, "swap_ab", "TileDescription.swap_ab", "True or False",
                                           "SM90, small M: the kernel computes D^T = B^T A^T (tile M along N, tile N "
                                           "along M)");
  }
}

}  // namespace cuforge::python
