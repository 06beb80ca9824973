// The kernel catalog: every valid GEMM configuration per architecture family, generated from
// small tables (math instructions, tiles, clusters, schedules, alignments) through the rules of
// gemm_config.hpp, plus filters over it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuforge/library/gemm_config.hpp"

namespace cuforge::library {

// Architecture families the catalog knows.
inline constexpr Arch kArchs[] = {80, 90};

// All valid configurations of a family (GEMM, grouped GEMM and convolution kernels), enumerated
// once and kept for the process.
const std::vector<GemmConfig>& gemm_catalog(Arch arch);

struct GemmFilter {
  std::optional<KernelKind> kind;  // nullopt: every kind
  std::optional<Arch> arch;
  std::optional<DataType> element_a, element_b, element_accumulator, element_c, element_d;
  std::optional<Layout> layout_a, layout_b, layout_c;
  std::optional<OpcodeClass> opclass;
  std::optional<MathOperation> math;
  std::string name_glob;  // shell glob on the kernel name; empty matches all

  bool matches(const GemmConfig& config) const;
};

std::vector<const GemmConfig*> find_gemms(const GemmFilter& filter);

// Refuses a glob on kernel names that fnmatch would misread: a '[' never closed (taken as a literal,
// so a typo reads as "no kernel matches"), a trailing '\' or an unknown [:class:] (neither matches
// anything), or a NUL (the C string stops there: '*\0x' matches all).
void check_glob(const std::string& glob);

// A catalog row whose epilogue reads C of `element_c` (its D unchanged): the catalog lists C and D of
// one type, and SM90 GEMMs of 16-bit inputs also read a C of that type beside an f32 D, those of fp8 inputs
// a C of any of their output types beside any D (CUTLASS 3's epilogue takes them apart). Null where the
// row cannot (why_invalid); the same row each time.
const GemmConfig* reading_c_as(const GemmConfig& row, DataType element_c);

}  // namespace cuforge::library
