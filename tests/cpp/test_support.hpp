// Small helpers shared by the CPU tests: temporary directories, files, child processes, and the
// toolchain the nvcc tests compile with.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "cuforge/compile/toolchain.hpp"
#include "cuforge/core/tensor.hpp"

namespace cuforge::test {

namespace fs = std::filesystem;

// A copy of `value` with `change` applied: the rows of a table that differ from a base case in one place.
template <class T, class F>
T changed(T value, F&& change) {
  change(value);
  return value;
}

// Whether `text` holds `part`.
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What the E that `f` throws says ("" when it throws none).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}


// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at the end of the scope.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/cuforge-test.XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~TempDir() {
    // Tests make parts read-only or hand them to other users: take them back before removing.
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (::lchown(it->path().c_str(), ::geteuid(), ::getegid()) != 0) {
      }
      if (!it->is_symlink(ec)) ::chmod(it->path().c_str(), it->is_directory(ec) ? 0700 : 0600);
    }
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline mode_t mode_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Runs `body` in `n` forked children that start together (released through a pipe) and returns
// their exit statuses (the value given to _exit, or 128 + signal). A child whose body throws
// exits with 100.
inline std::vector<int> run_children(int n, const std::function<int(int)>& body) {
  int gate[2];
  if (::pipe(gate) != 0) throw std::runtime_error("pipe failed");
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::close(gate[1]);
      char c;
      while (::read(gate[0], &c, 1) < 0 && errno == EINTR) {
      }
      int rc = 100;
      try {
        rc = body(i);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", i, e.what());
      }
      std::fflush(stderr);
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);  // releases every child at once
  std::vector<int> statuses;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    statuses.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return statuses;
}

// An unprivileged uid for tests that need a second user (they run as root to use it).
inline constexpr uid_t kOtherUid = 65534;  // nobody

// The toolchain the nvcc tests compile with. With CUTLASS_PATH unset, the CUTLASS tree found when
// the tests were configured is the default (the library's own default may be empty).
inline const compile::Toolchain& toolchain() {
  static const bool once = [] {
    const char* env = std::getenv("CUTLASS_PATH");
    if ((!env || !*env) && *CUFORGE_TEST_CUTLASS_PATH) compile::set_default_cutlass_path(CUFORGE_TEST_CUTLASS_PATH);
    return true;
  }();
  (void)once;
  return compile::Toolchain::get();
}

// A tensor at a fake device address (nothing is dereferenced): extents and strides in elements.
inline TensorRef tensor(uintptr_t address, std::vector<int64_t> shape, std::vector<int64_t> strides,
                        DataType dtype = DataType::f16, int device = 0) {
  TensorRef t;
  t.data = reinterpret_cast<const void*>(address);
  t.dtype = dtype;
  t.rank = int(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  t.device = device;
  return t;
}

}  // namespace cuforge::test
