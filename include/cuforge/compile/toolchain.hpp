// Where the compiler and the CUTLASS headers are, found once per process at the moment they are
// first needed (never at import), with errors that say what to install or set.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuforge/core/types.hpp"

namespace cuforge::compile {

struct Toolchain {
  std::filesystem::path nvcc;
  std::string cuda_version;      // "13.0.88", from the toolkit's version.json
  std::string nvcc_identity;     // path, size and modification time of nvcc, plus cuda_version
  std::filesystem::path cutlass; // holds include/cutlass/version.h and tools/util/include
  std::string cutlass_version;   // "4.2.0"

  // How long `nvcc --version` may run (asked only when the toolkit has no version.json) before the
  // toolchain is refused: a wrapper that hangs must not hang every compile. Builds have no limit.
  static constexpr std::chrono::seconds kNvccProbeTimeout{60};

  // nvcc from CUDA_INSTALL_PATH, PATH or /usr/local/cuda; CUTLASS from CUTLASS_PATH or the
  // default set with set_default_cutlass_path (the pinned nvidia-cutlass wheel). Found once per
  // process. Throws ToolchainError.
  static const Toolchain& get();
  // The same search, done afresh, with `nvcc_timeout` for nvcc's version (tests use a short one).
  static Toolchain find(std::chrono::milliseconds nvcc_timeout = kNvccProbeTimeout);

  // The nvcc arguments that build one kernel of `family` into a shared library for SASS `target_cc`.
  std::vector<std::string> nvcc_flags(Arch family, int target_cc) const;
  // Those of them that compile its source to an object: no include directories, no linking.
  std::vector<std::string> nvcc_compile_flags(Arch family, int target_cc) const;
};

// Throws InvalidArgumentError unless `cc` is a GPU nvcc builds SASS for.
void check_known_target(int cc);
// Why kernels of `family` cannot be built for compute capability `target_cc`, a known target (SM80 kernels: 8.0
// and later; SM90 kernels: sm_90a, exactly 9.0); nullopt where they can.
std::optional<std::string> why_bad_target(Arch family, int target_cc);
// Throws InvalidArgumentError unless `target_cc` is a known target and nvcc can build kernels of `family` for it.
void check_target(Arch family, int target_cc);
// The same for a build asked for compute capability `asked` (0: none): that one where given, else the kernel's
// own `target_cc` (an SM90 kernel's is 9.0, whatever GPU the machine has).
inline void check_target(Arch family, int target_cc, int asked) { check_target(family, asked ? asked : target_cc); }

// The CUTLASS tree used when CUTLASS_PATH is unset (the Python module points it at the wheel).
void set_default_cutlass_path(const std::filesystem::path& path);

// The CUTLASS major.minor cuforge's templates are written for.
inline constexpr const char* kCutlassSeries = "4.2";

}  // namespace cuforge::compile
