// The kernel cache's tests' fixture (test_cache.cpp, test_cache_concurrency.cpp): a cache in a
// temporary directory, driven directly with staged builds that hold a fake kernel.so (no nvcc).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cuforge/compile/cache.hpp"
#include "test_support.hpp"

namespace cuforge::test {

using compile::CacheEntry;
using compile::KernelCache;

inline const std::string kKey = "0123456789abcdef0123456789abcdef";
inline const std::string kName = "cuforge_fake_kernel";

// A finished build, as the compiler leaves it: a staging directory with kernel.cu and kernel.so,
// the key's lock held until it is published (or dropped).
inline std::unique_ptr<KernelCache::Build> stage(const KernelCache& cache, const std::string& key,
                                                 const std::string& library) {
  auto build = cache.begin_build(key);
  test::write_file(build->staging() / "kernel.cu", "// source of " + key + "\n");
  test::write_file(build->staging() / "kernel.so", library);
  return build;
}

inline CacheEntry publish(const KernelCache& cache, const std::string& key, const std::string& name,
                          const std::string& library) {
  return cache.publish(key, name, *stage(cache, key, library));
}

// A staging directory as a build that died leaves it (no lock held).
inline fs::path dead_staging(const KernelCache& cache, const std::string& key) {
  fs::path dir = cache.root() / "staging" / (key + ".deadbeef");
  fs::create_directories(dir);
  test::write_file(dir / "kernel.cu", "// half a build\n");
  return dir;
}

inline std::string fake_library(size_t bytes = 4096, char seed = 'x') {
  std::string s(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) s[i] = char(seed + i * 31);
  return s;
}

inline std::vector<fs::path> children(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  return out;
}

inline std::string problem_of(const KernelCache& cache, const std::string& key) {
  for (const auto& check : cache.verify())
    if (check.key == key) return check.problem;
  return "<no such entry>";
}

class CacheTest : public ::testing::Test {
 protected:
  TempDir tmp;
  KernelCache cache{tmp.path()};
  fs::path entry_dir() const { return cache.root() / "kernels" / kKey; }
};

}  // namespace cuforge::test
