#include "cuforge/select/gemm_settings.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"

namespace cuforge::select {

namespace {

// The epilogue computes in f32 (or f16): a slope past f32's range would be inf there, 0 * inf NaN at x = 0.
bool finite_in_f32(double x) { return std::abs(x) <= std::numeric_limits<float>::max(); }

}  // namespace

void GemmSettings::set_activation(Activation a, std::optional<double> argument) {
  check_enumerator(a, "activation");
  if (argument && a != Activation::leaky_relu && *argument != 0.0)
    throw InvalidArgumentError(fmt::format("activation: {} takes no argument, got {}", to_string(a), *argument));
  if (argument && !finite_in_f32(*argument))
    throw InvalidArgumentError(fmt::format("activation: leaky_relu's slope must be finite in f32, got {}", *argument));
  activation = a;
  activation_argument = argument.value_or(default_activation_argument(a));
}

void GemmSettings::set_decomposition(Decomposition d) {
  if (takes_slices(d) && splits < 2)
    throw InvalidArgumentError(fmt::format("decomposition {} cuts K into split_k_slices >= 2 slices: set "
                                           "split_k_slices first (the decomposition then keeps them)",
                                           to_string(d)));
  if (!takes_slices(d)) splits = 1;
  decomposition = d;
}

void GemmSettings::set_split_k_slices(int64_t slices) {
  if (slices < 1 || slices > kMaxSplits)
    throw InvalidArgumentError(fmt::format("split_k_slices: expected 1 to {} slices of K, got {}", kMaxSplits, slices));
  if (slices == 1) {
    if (takes_slices(decomposition)) decomposition = Decomposition::Heuristic;  // data-parallel, stream-K stay
  } else if (!takes_slices(decomposition)) {
    decomposition = Decomposition::SplitK;
  }
  splits = int(slices);
}

bool GemmSettings::autotune_by_default() {
  const char* value = std::getenv("CUFORGE_AUTOTUNE");
  if (!value || std::string_view(value).empty() || std::string_view(value) == "0") return false;
  if (std::string_view(value) == "1") return true;
  // Said once, with no lock held while it is said (the Python sink may let the GIL go, and another thread take it
  // and wait here: std::call_once's lock deadlocked them).
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    log(LogLevel::warning, fmt::format("CUFORGE_AUTOTUNE is '{}': expected 1 (autotune) or 0; plans do not autotune",
                                       value));
  return false;
}

FirstRun GemmSettings::first_run_by_default() {
  const char* value = std::getenv("CUFORGE_FIRST_RUN");
  if (!value || std::string_view(value).empty() || std::string_view(value) == "wait") return FirstRun::wait;
  if (std::string_view(value) == "fallback") return FirstRun::fallback;
  static std::atomic<bool> warned{false};  // as CUFORGE_AUTOTUNE's: no lock held while it is said
  if (!warned.exchange(true))
    log(LogLevel::warning, fmt::format("CUFORGE_FIRST_RUN is '{}': expected wait or fallback; plans wait", value));
  return FirstRun::wait;
}

void GemmSettings::check() const {
  check_enumerator(activation, "activation");
  check_enumerator(decomposition, "decomposition");
  if (tile_scheduler) check_enumerator(*tile_scheduler, "tile_scheduler");
  if (opclass) check_enumerator(*opclass, "opclass");
  if (math) check_enumerator(*math, "math_operation");
  if (math == MathOperation::MultiplyAddFastBF16 || math == MathOperation::MultiplyAddFastF16)
    throw InvalidArgumentError(fmt::format(
        "math_operation {}: cuforge builds no kernel of it (f32 products from 16-bit tensor-core passes); "
        "multiply_add_fast_f32 (3xTF32) is the fast f32 math it builds",
        math == MathOperation::MultiplyAddFastBF16 ? "multiply_add_fast_bf16" : "multiply_add_fast_f16"));
  if (iterator_algorithm) check_enumerator(*iterator_algorithm, "iterator_algorithm");
  if (tile) {
    check_enumerator(tile->kernel_schedule, "tile description: kernel_schedule");
    check_enumerator(tile->epilogue_schedule, "tile description: epilogue_schedule");
    check_enumerator(tile->tile_scheduler, "tile description: tile_scheduler");
  }
  if (first_run != FirstRun::wait && first_run != FirstRun::fallback)
    throw InvalidArgumentError(fmt::format("first_run: {} is not wait or fallback", static_cast<int>(first_run)));
  const bool sliced = takes_slices(decomposition);
  if (splits < 1 || splits > kMaxSplits || (sliced ? splits < 2 : splits != 1))
    throw InvalidArgumentError(fmt::format("split-K takes 2 to {} slices, and only split-K takes slices: got {} "
                                           "with {} slices",
                                           kMaxSplits, to_string(decomposition), splits));
  if (activation != Activation::leaky_relu && activation_argument != 0.0)
    throw InvalidArgumentError(fmt::format("activation: {} takes no argument, got {}", to_string(activation),
                                           activation_argument));
  if (tile && (tile->kernel_schedule == KernelSchedule::Auto) != (tile->epilogue_schedule == EpilogueSchedule::Auto))
    throw InvalidArgumentError(fmt::format("tile description: the kernel schedule is {} and the epilogue schedule {}: "
                                           "give both, or leave both automatic (ScheduleAuto)",
                                           to_string(tile->kernel_schedule), to_string(tile->epilogue_schedule)));
  if (autotune_candidates < 1 || autotune_candidates > kMaxAutotuneCandidates)
    throw InvalidArgumentError(fmt::format("autotune_candidates: expected 1 to {} kernels to time, got {}",
                                           kMaxAutotuneCandidates, autotune_candidates));
  if (!finite_in_f32(activation_argument))
    throw InvalidArgumentError(fmt::format("activation: leaky_relu's slope must be finite in f32, got {}",
                                           activation_argument));
}

}  // namespace cuforge::select
