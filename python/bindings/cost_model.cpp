#include "cost_model.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <cmath>
#include <string>

#include "cuforge/core/conv_problem.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/library/gemm_config.hpp"
#include "cuforge/op/conv_check.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "operands.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace cuforge::python {
namespace {

// The estimates' arguments as selection gives them: the model clamps splits and SM counts below 1, which from a
// caller are mistakes, refused.
void check_counts(const char* function, int splits, int sm_count) {
  if (splits < 1 || sm_count < 1)
    throw InvalidArgumentError(std::string(function) + ": expected splits and sm_count >= 1, got " +
                               std::to_string(splits) + " and " + std::to_string(sm_count));
}

GemmShape checked_shape(const char* function, int64_t m, int64_t n, int64_t k, int64_t batch, int splits,
                        int sm_count) {
  if (m < 1 || n < 1 || k < 0 || batch < 1)
    throw InvalidArgumentError(std::string(function) + ": expected M, N, batch >= 1 and K >= 0, got " +
                               std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " (batch " +
                               std::to_string(batch) + ")");
  check_counts(function, splits, sm_count);
  GemmShape shape;
  shape.m = m, shape.n = n, shape.k = k, shape.batch = batch;
  return shape;
}

// A constant of the model, read and written from Python: a setter that refuses what no constant is (NaN, an
// infinity, a negative number), which would turn every estimate and the ranking built on them into nonsense.
template <double select::CostModel::*Field>
auto getter() {
  return [](const select::CostModel& model) { return model.*Field; };
}

template <double select::CostModel::*Field>
auto setter(const char* name) {
  return [name](select::CostModel& model, double value) {
    if (!(std::isfinite(value) && value >= 0))
      throw InvalidArgumentError(std::string("CostModel.") + name + ": expected a finite number of 0 or more, got " +
                                 std::to_string(value));
    model.*Field = value;
  };
}

}  // namespace

void bind_cost_model(nb::module_& m) {
  nb::class_<select::CostModel>(m, "CostModel",
                                 "The selection cost model's fitted constants, each as documented in "
                                 "include/cuforge/select/gemm_cost.hpp (defaults: the built-in model).")
      .def(nb::init<>())
      .def_prop_rw("tile_efficiency_exponent", getter<&select::CostModel::tile_efficiency_exponent>(), setter<&select::CostModel::tile_efficiency_exponent>("tile_efficiency_exponent"))
      .def_prop_rw("implicit_gemm_tile_exponent", getter<&select::CostModel::implicit_gemm_tile_exponent>(), setter<&select::CostModel::implicit_gemm_tile_exponent>("implicit_gemm_tile_exponent"))
      .def_prop_rw("pingpong_edge", getter<&select::CostModel::pingpong_edge>(), setter<&select::CostModel::pingpong_edge>("pingpong_edge"))
      .def_prop_rw("tall_tile_edge", getter<&select::CostModel::tall_tile_edge>(), setter<&select::CostModel::tall_tile_edge>("tall_tile_edge"))
      .def_prop_rw("mma_sync_fraction", getter<&select::CostModel::mma_sync_fraction>(), setter<&select::CostModel::mma_sync_fraction>("mma_sync_fraction"))
      .def_prop_rw("sm80_tf32_time_factor", getter<&select::CostModel::sm80_tf32_time_factor>(), setter<&select::CostModel::sm80_tf32_time_factor>("sm80_tf32_time_factor"))
      .def_prop_rw("launch_us", getter<&select::CostModel::launch_us>(), setter<&select::CostModel::launch_us>("launch_us"))
      .def_prop_rw("stream_k_overhead", getter<&select::CostModel::stream_k_overhead>(), setter<&select::CostModel::stream_k_overhead>("stream_k_overhead"))
      .def_prop_rw("fixup_bytes_per_second", getter<&select::CostModel::fixup_bytes_per_second>(), setter<&select::CostModel::fixup_bytes_per_second>("fixup_bytes_per_second"))
      .def_prop_rw("reduction_turn_us", getter<&select::CostModel::reduction_turn_us>(), setter<&select::CostModel::reduction_turn_us>("reduction_turn_us"))
      .def_prop_rw("arrival_order_turn_fraction", getter<&select::CostModel::arrival_order_turn_fraction>(), setter<&select::CostModel::arrival_order_turn_fraction>("arrival_order_turn_fraction"))
      .def_prop_rw("fp8_turn_factor", getter<&select::CostModel::fp8_turn_factor>(), setter<&select::CostModel::fp8_turn_factor>("fp8_turn_factor"))
      .def_prop_rw("spanning_stream_k_turns", getter<&select::CostModel::spanning_stream_k_turns>(), setter<&select::CostModel::spanning_stream_k_turns>("spanning_stream_k_turns"))
      .def_prop_rw("reduction_launch_us", getter<&select::CostModel::reduction_launch_us>(), setter<&select::CostModel::reduction_launch_us>("reduction_launch_us"))
      .def_prop_rw("partial_bytes_per_second", getter<&select::CostModel::partial_bytes_per_second>(), setter<&select::CostModel::partial_bytes_per_second>("partial_bytes_per_second"))
      .def_prop_rw("lone_pingpong_fraction", getter<&select::CostModel::lone_pingpong_fraction>(), setter<&select::CostModel::lone_pingpong_fraction>("lone_pingpong_fraction"))
      .def_prop_rw("lone_mma_sync_fraction", getter<&select::CostModel::lone_mma_sync_fraction>(), setter<&select::CostModel::lone_mma_sync_fraction>("lone_mma_sync_fraction"))
      .def_prop_rw("unhidden_fraction", getter<&select::CostModel::unhidden_fraction>(), setter<&select::CostModel::unhidden_fraction>("unhidden_fraction"))
      .def_prop_rw("wave_latency_us", getter<&select::CostModel::wave_latency_us>(), setter<&select::CostModel::wave_latency_us>("wave_latency_us"))
      .def_prop_rw("panel_bytes_per_second", getter<&select::CostModel::panel_bytes_per_second>(), setter<&select::CostModel::panel_bytes_per_second>("panel_bytes_per_second"))
      .def_prop_rw("cp_async_panel_fraction", getter<&select::CostModel::cp_async_panel_fraction>(), setter<&select::CostModel::cp_async_panel_fraction>("cp_async_panel_fraction"))
      .def_prop_rw("lone_implicit_gemm_wave_us", getter<&select::CostModel::lone_implicit_gemm_wave_us>(), setter<&select::CostModel::lone_implicit_gemm_wave_us>("lone_implicit_gemm_wave_us"))
      .def_prop_rw("per_tile_setup_saving_us", getter<&select::CostModel::per_tile_setup_saving_us>(), setter<&select::CostModel::per_tile_setup_saving_us>("per_tile_setup_saving_us"))
      .def_prop_rw("per_tile_wave_us", getter<&select::CostModel::per_tile_wave_us>(), setter<&select::CostModel::per_tile_wave_us>("per_tile_wave_us"))
      .def_prop_rw("per_tile_narrow_fraction", getter<&select::CostModel::per_tile_narrow_fraction>(), setter<&select::CostModel::per_tile_narrow_fraction>("per_tile_narrow_fraction"))
      .def_prop_rw("overlapped_promotion_edge", getter<&select::CostModel::overlapped_promotion_edge>(), setter<&select::CostModel::overlapped_promotion_edge>("overlapped_promotion_edge"))
      .def_prop_rw("transpose_bandwidth_fraction", getter<&select::CostModel::transpose_bandwidth_fraction>(), setter<&select::CostModel::transpose_bandwidth_fraction>("transpose_bandwidth_fraction"))
      .def_prop_rw("register_sourced_fraction", getter<&select::CostModel::register_sourced_fraction>(), setter<&select::CostModel::register_sourced_fraction>("register_sourced_fraction"))
      .def_prop_rw("register_sourced_wide_fraction", getter<&select::CostModel::register_sourced_wide_fraction>(), setter<&select::CostModel::register_sourced_wide_fraction>("register_sourced_wide_fraction"))
      .def_prop_rw("register_sourced_lone_fraction", getter<&select::CostModel::register_sourced_lone_fraction>(), setter<&select::CostModel::register_sourced_lone_fraction>("register_sourced_lone_fraction"))
      .def_prop_rw("register_sourced_stream_k_overhead", getter<&select::CostModel::register_sourced_stream_k_overhead>(), setter<&select::CostModel::register_sourced_stream_k_overhead>("register_sourced_stream_k_overhead"))
      .def_prop_rw("cluster_of_four_sm_fraction", getter<&select::CostModel::cluster_of_four_sm_fraction>(), setter<&select::CostModel::cluster_of_four_sm_fraction>("cluster_of_four_sm_fraction"));
  m.def("estimated_time_us",
        [](const std::string& name, int64_t m, int64_t n, int64_t k, int64_t batch, int splits, bool deterministic,
           int sm_count, const select::CostModel& model, bool ragged) {
          GemmShape shape = checked_shape("estimated_time_us", m, n, k, batch, splits, sm_count);
          shape.ragged = ragged;
          return select::estimated_time_us(library::parse_gemm_name(name), shape, splits, deterministic, sm_count,
                                           model);
        },
        "name"_a, "m"_a, "n"_a, "k"_a, "batch"_a = 1, "splits"_a = 1, "deterministic"_a = true, "sm_count"_a = 132,
        "model"_a = select::CostModel{}, "ragged"_a = false,
        "The cost model's estimate (µs) of one run of a kernel, by name, on M x N x K (batch), K in `splits` slices, "
        "with `model`'s constants: what selection ranks candidates by; for a grouped kernel, `batch` groups of mean "
        "M (differing between groups where `ragged`, as the offsets form's are). Needs no GPU.");
  m.def("tie_rank",
        [](const std::string& name, int64_t m, int64_t n, int64_t batch, int splits, int sm_count) {
          const GemmShape shape = checked_shape("tie_rank", m, n, 0, batch, splits, sm_count);
          return select::tie_rank(library::parse_gemm_name(name), splits, shape, sm_count);
        },
        "name"_a, "m"_a, "n"_a, "batch"_a = 1, "splits"_a = 1, "sm_count"_a = 132,
        "Where the selection puts an SM90 kernel, by name, on M x N (batch) among kernels it estimates alike, lower "
        "first (0: its cluster spans M, cluster_spans_m; 1: the non-persistent GEMM kernel in the cluster sharing the "
        "larger operand's tiles, 2x1 or 1x2, where it pads no tile, TF32's swapped 128x128 tile in 4x1 clusters where "
        "they pad none, and a persistent fp8 kernel in 1x2 clusters, but a data-parallel or stream-K kernel of fp8's "
        "overlapped promotion in the cluster of two sharing the larger operand's tiles; 2: the others, that kernel in "
        "its other cluster of two; 3: that kernel in a cluster of one; 4: that kernel in a cluster that pads a tile, "
        "and in the other cluster of two where the sharing one pads and the tiles fit one wave; each rank in the "
        "catalog's order). Needs no GPU.");
  m.def("estimated_conv_time_us",
        [](const std::string& name, const python::ConvExtents& extents, const python::Pair& stride,
           const python::Pair& padding, const python::Pair& dilation, int splits, bool deterministic, int sm_count, const select::CostModel& model) {
          const library::GemmConfig c = library::parse_gemm_name(name);
          if (!is_conv(c.kind))
            throw InvalidArgumentError("estimated_conv_time_us: " + name + " is not a convolution kernel");
          GemmTypes types{c.element_a, c.element_b, c.element_c, c.element_d, c.element_accumulator};
          GemmShape shape = op::conv_shape(c.kind, types, op::conv_size(extents, {stride, padding, dilation}));
          check_counts("estimated_conv_time_us", splits, sm_count);
          return select::estimated_time_us(c, shape, splits, deterministic, sm_count, model);
        },
        "name"_a, "extents"_a, "stride"_a, "padding"_a, "dilation"_a, "splits"_a = 1, "deterministic"_a = true,
        "sm_count"_a = 132, "model"_a = select::CostModel{},
        "The cost model's estimate (µs) of one run of a convolution kernel, by name, on dense NHWC tensors of "
        "(N, H, W, C, K, R, S) with the geometry given. Needs no GPU.");
}

}  // namespace cuforge::python
