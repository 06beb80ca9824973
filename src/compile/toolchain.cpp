#include "cuforge/compile/toolchain.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <iterator>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "cuforge/core/error.hpp"
#include "files.hpp"
#include "process.hpp"

namespace cuforge::compile {
namespace fs = std::filesystem;
namespace {

std::mutex g_mutex;
fs::path g_default_cutlass = CUFORGE_DEFAULT_CUTLASS_PATH;  // set by CMake; may be empty

bool is_program(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

fs::path find_nvcc() {
  if (const char* root = std::getenv("CUDA_INSTALL_PATH"); root && *root) {
    fs::path nvcc = fs::path(root) / "bin" / "nvcc";
    if (!is_program(nvcc)) {
      std::error_code ec;  // a path the file system refuses (a loop of links, too long) is said as such, not thrown
      const fs::file_status st = fs::status(nvcc, ec);
      throw ToolchainError(fmt::format("CUDA_INSTALL_PATH is {}, but {} {}: point it at a CUDA toolkit (the directory "
                                       "holding bin/nvcc)",
                                       root, nvcc.string(),
                                       ec && ec != std::errc::no_such_file_or_directory
                                           ? "cannot be read (" + ec.message() + ")"
                                       : !fs::exists(st)        ? std::string("does not exist")
                                       : fs::is_directory(st)   ? std::string("is a directory")
                                                                : std::string("is not an executable file")));
    }
    return fs::absolute(nvcc);
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && is_program(fs::path(dir) / "nvcc")) return fs::absolute(fs::path(dir) / "nvcc");
  }
  if (is_program("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  throw ToolchainError(
      "nvcc was not found (not under CUDA_INSTALL_PATH, not on PATH, not in /usr/local/cuda): install the CUDA "
      "toolkit 12.4 or newer and set CUDA_INSTALL_PATH to it");
}

// The nvccs whose `--version` outlived its timeout in this process, refused at once after that
// (every compile looks the toolchain up again while none is found). Guarded by g_mutex.
std::set<std::string> g_hung_nvccs;

// The toolkit's version: its version.json, else what `nvcc --version` says ("V13.0.88") within
// `timeout` (an nvcc that hangs would hang every compile). An nvcc whose `--version` fails and says no
// version is refused: it would not compile either, and a version read as "unknown" would key every kernel
// anew (under compute-sanitizer following child processes, nvcc died of SIGSEGV and every cached kernel
// missed). One that exits 0 saying no version in nvcc's words (a wrapper) is "unknown", a stable key.
// The caller holds g_mutex.
std::string cuda_version_of(const fs::path& nvcc, std::chrono::milliseconds timeout) {
  fs::path json = nvcc.parent_path().parent_path() / "version.json";
  nlohmann::json doc;
  try {
    doc = read_json(json);
  } catch (const CacheError&) {
    // No readable version.json: nvcc says.
  }
  if (doc.is_object() && doc.contains("cuda") && doc["cuda"].is_object() && doc["cuda"].contains("version") &&
      doc["cuda"]["version"].is_string())
    return doc["cuda"]["version"].get<std::string>();
  const auto hung = [&] {
    return ToolchainError(fmt::format("{} --version did not finish within {:.1f} s and was killed: point "
                                      "CUDA_INSTALL_PATH or PATH at a working CUDA toolkit",
                                      nvcc.string(), std::chrono::duration<double>(timeout).count()));
  };
  if (g_hung_nvccs.count(nvcc.string())) throw hung();
  // nvcc's words go to a directory of this process's own (mkdtemp): a file of a predictable name in a shared
  // temporary directory could be another user's link, which the log's truncation would write through.
  std::error_code ec;
  const fs::path temp = fs::temp_directory_path(ec);
  const char* tmpdir = std::getenv("TMPDIR");
  if (ec)
    throw ToolchainError(fmt::format("reading {} --version needs a temporary directory: {} ({}); set TMPDIR to a "
                                     "writable directory", nvcc.string(),
                                     tmpdir ? fmt::format("TMPDIR is {}", tmpdir) : std::string("none was found"),
                                     ec.message()));
  std::string private_dir = (temp / "cuforge-nvcc-version-XXXXXX").string();
  if (!::mkdtemp(private_dir.data()))
    throw ToolchainError(fmt::format("reading {} --version needs a temporary directory: none could be made in {} "
                                     "({}); set TMPDIR to a writable directory", nvcc.string(), temp.string(),
                                     std::strerror(errno)));
  struct Removed {  // the directory goes whatever happens below
    fs::path path;
    ~Removed() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } removed{private_dir};
  const fs::path log = removed.path / "nvcc-version.txt";
  const std::optional<int> status = wait_process(start_process({nvcc.string(), "--version"}, log), timeout);
  std::string text = status ? read_file_or_empty(log) : "";
  if (!status) {
    g_hung_nvccs.insert(nvcc.string());
    throw hung();
  }
  // "Cuda compilation tools, release 13.0, V13.0.48": digits and dots only (the version is part of cache and tuning
  // keys and is shown; a wrapper's bytes are neither).
  size_t at = text.rfind(", V");
  std::string version = at == std::string::npos ? "" : text.substr(at + 3, text.find_first_of(" \n", at + 3) - at - 3);
  if (!version.empty() && version.find_first_not_of("0123456789.") == std::string::npos) return version;
  if (*status != 0)  // start_process's supervisor exits 128 + N for a command killed by signal N, as shells do
    throw ToolchainError(fmt::format("{} --version failed ({}) and said no version: point CUDA_INSTALL_PATH or PATH "
                                     "at a working CUDA toolkit", nvcc.string(),
                                     *status > 128 ? fmt::format("exit status {}: signal {}?", *status, *status - 128)
                                                   : fmt::format("exit status {}", *status)));
  return "unknown";
}

fs::path find_cutlass() {
  const char* env = std::getenv("CUTLASS_PATH");
  fs::path root = env && *env ? fs::path(env) : g_default_cutlass;
  const char* how = env && *env ? "CUTLASS_PATH" : "the default CUTLASS location";
  if (root.empty())
    throw ToolchainError(
        "the CUTLASS headers were not found: set CUTLASS_PATH to a CUTLASS 4.2 checkout (the directory holding "
        "include/cutlass), or pip install nvidia-cutlass==4.2.0.0 (then, for a C++ program, configure cuforge's "
        "build again: it takes the wheel's headers as its default)");
  std::error_code ec;  // a path the file system refuses (a loop of links, too long) is said as such, not thrown
  if (!fs::exists(root / "include" / "cutlass" / "version.h", ec))
    throw ToolchainError(fmt::format("{} is {}, which holds no include/cutlass/version.h{}: set CUTLASS_PATH to a "
                                     "CUTLASS 4.2 checkout or pip install nvidia-cutlass==4.2.0.0",
                                     how, root.string(), ec ? " (" + ec.message() + ")" : std::string()));
  return root;
}

std::string cutlass_version_of(const fs::path& root) {
  // A plain scan rather than std::regex: libstdc++'s regex compiler misbehaves when the process
  // holds another C++ runtime's locale (seen under PyTorch).
  std::string text = read_file_or_empty(root / "include" / "cutlass" / "version.h");
  std::string version;
  for (const char* part : {"MAJOR", "MINOR", "PATCH"}) {
    std::string macro = std::string("#define CUTLASS_") + part;
    size_t at = text.find(macro);
    size_t digits = at == std::string::npos ? at : text.find_first_of("0123456789", at + macro.size());
    if (digits == std::string::npos || text.find_first_not_of(" \t", at + macro.size()) != digits)
      throw ToolchainError("cannot read the CUTLASS version from " + (root / "include/cutlass/version.h").string());
    size_t end = text.find_first_not_of("0123456789", digits);
    version += (version.empty() ? "" : ".") + text.substr(digits, end - digits);
  }
  return version;
}

// Compute capabilities CUDA 13's nvcc builds SASS for.
constexpr int kKnownTargets[] = {80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};

}  // namespace

void check_known_target(int cc) {
  if (std::find(std::begin(kKnownTargets), std::end(kKnownTargets), cc) != std::end(kKnownTargets)) return;
  std::string known;
  for (int k : kKnownTargets) known += (known.empty() ? "" : ", ") + std::to_string(k);
  throw InvalidArgumentError(fmt::format("compute capability {} is not a GPU nvcc builds kernels for (known: {})", cc,
                                         known));
}

std::optional<std::string> why_bad_target(Arch family, int target_cc) {
  if (family != 80 && family != 90)
    return fmt::format("kernel family {}: cuforge's kernels are of the sm80 and sm90 families", family);
  if (family >= 90 && target_cc != 90)
    return fmt::format("SM90 kernels (wgmma, TMA) are built for sm_90a and run on compute capability 9.0 only, not {}",
                       target_cc);
  if (family < 90 && target_cc < family)
    return fmt::format("sm{} kernels need compute capability {} or newer, not {}", family, family, target_cc);
  return std::nullopt;
}

void check_target(Arch family, int target_cc) {
  check_known_target(target_cc);
  if (auto why = why_bad_target(family, target_cc)) throw InvalidArgumentError(*why);
}

void set_default_cutlass_path(const fs::path& path) {
  std::lock_guard lock(g_mutex);
  g_default_cutlass = path;
}

namespace {

// What Toolchain::get and Toolchain::find return; the caller holds g_mutex.
std::unique_ptr<Toolchain> search(std::chrono::milliseconds nvcc_timeout) {
  auto t = std::make_unique<Toolchain>();
  t->nvcc = find_nvcc();
  t->cuda_version = cuda_version_of(t->nvcc, nvcc_timeout);
  struct stat st {};
  ::stat(t->nvcc.c_str(), &st);
  t->nvcc_identity = fmt::format("{}:{}:{}:{}", fs::weakly_canonical(t->nvcc).string(), st.st_size,
                                 st.st_mtime, t->cuda_version);
  // Absolute, as found now: a relative CUTLASS_PATH kept as such named another tree after the process changed
  // directory (the headers went missing from builds after os.chdir). (nvcc's path is absolute as found.)
  std::error_code ec;
  t->cutlass = find_cutlass();
  if (fs::path absolute = fs::absolute(t->cutlass, ec); !ec) t->cutlass = absolute;  // else as given (no cwd)
  for (const auto& [path, named] : {std::pair{t->nvcc, "the CUDA toolkit (CUDA_INSTALL_PATH or PATH)"},
                                    std::pair{t->cutlass, "CUTLASS_PATH"}})
    if (const std::string c = shell_special(path); !c.empty())
      throw ToolchainError(fmt::format("{} is {}, which holds a '{}' the shell nvcc runs its steps in would expand: "
                                       "install it under a path without {}",
                                       named, path.string(), c, kShellSpecialCharacters));
  t->cutlass_version = cutlass_version_of(t->cutlass);
  if (t->cutlass_version.rfind(std::string(kCutlassSeries) + ".", 0) != 0)
    throw ToolchainError(fmt::format("the CUTLASS headers at {} are version {}, but cuforge's kernels are written for "
                                     "CUTLASS {}: pip install nvidia-cutlass==4.2.0.0 or point CUTLASS_PATH at a 4.2 tree",
                                     t->cutlass.string(), t->cutlass_version, kCutlassSeries));
  return t;
}

}  // namespace

const Toolchain& Toolchain::get() {
  static std::unique_ptr<Toolchain> found;
  std::lock_guard lock(g_mutex);
  if (!found) found = search(kNvccProbeTimeout);
  return *found;
}

Toolchain Toolchain::find(std::chrono::milliseconds nvcc_timeout) {
  std::lock_guard lock(g_mutex);
  return *search(nvcc_timeout);
}

std::vector<std::string> Toolchain::nvcc_compile_flags(Arch family, int target_cc) const {
  // SM90 kernels need the arch-specific target (wgmma, TMA); SM80 kernels are compiled from
  // compute_80 into the device's own SASS so they also run on later GPUs.
  std::string gencode = family >= 90 ? fmt::format("-gencode=arch=compute_{0}a,code=sm_{0}a", target_cc)
                                     : fmt::format("-gencode=arch=compute_{},code=sm_{}", family, target_cc);
  std::vector<std::string> flags = {"-std=c++17", "-O3", "-DNDEBUG", "-Xcompiler=-fPIC,-fvisibility=hidden",
                                    "--expt-relaxed-constexpr", "-DCUTLASS_ENABLE_TENSOR_CORE_MMA=1", gencode};
  // TMA descriptors are encoded on every run: call the driver directly rather than looking the
  // entry point up each time (linked against libcuda).
  if (family >= 90) flags.push_back("-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1");
  return flags;
}

std::vector<std::string> Toolchain::nvcc_flags(Arch family, int target_cc) const {
  std::vector<std::string> flags = nvcc_compile_flags(family, target_cc);
  flags.insert(flags.end(), {"--shared", "-I" + (cutlass / "include").string(),
                             "-I" + (cutlass / "tools" / "util" / "include").string()});
  if (family >= 90) {
    // The toolkit's stub libcuda; the real driver loads at run time.
    flags.push_back("-L" + (nvcc.parent_path().parent_path() / "lib64" / "stubs").string());
    flags.push_back("-lcuda");
  }
  return flags;
}

}  // namespace cuforge::compile
