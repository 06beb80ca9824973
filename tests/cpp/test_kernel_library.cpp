// runtime/kernel_library: a kernel library loaded by its ABI, and what its statuses say. The library
// here is built by the host compiler (no nvcc, no GPU), exporting the ABI's identity and a launch's
// error as a kernel library would keep it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "cuforge/abi.h"
#include "cuforge/core/error.hpp"
#include "cuforge/runtime/kernel_library.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using runtime::KernelLibrary;
using test::contains;
using test::TempDir;

// A library of ABI version `version` whose latest launch failed with the CUDA error `error`.
std::filesystem::path fake_library(const TempDir& tmp, const std::string& name, int version, int error) {
  const auto source = tmp.path() / (name + ".c");
  const auto library = tmp.path() / (name + ".so");
  test::write_file(source, fmt::format(R"(
int cuforge_abi_version(void) {{ return {}; }}
const char* cuforge_kernel_name(void) {{ return "{}"; }}
int cuforge_last_cuda_error(void) {{ return {}; }}
)", version, name, error));
  const std::string command = fmt::format("cc -shared -fPIC -o '{}' '{}'", library.string(), source.string());
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return library;
}

std::string message_of_check(const KernelLibrary& library, int status) {
  return test::message_of<DeviceError>([&] { library.check(status); });
}

TEST(KernelLibrary, ALaunchFailureNamesTheLibrarysOwnCudaError) {
  TempDir tmp;
  const auto library = KernelLibrary::load(fake_library(tmp, "cuforge_fake_a", CUFORGE_ABI_VERSION, 9));
  EXPECT_EQ(library->name(), "cuforge_fake_a");
  EXPECT_NO_THROW(library->check(CUFORGE_STATUS_SUCCESS));
  const std::string says = message_of_check(*library, CUFORGE_STATUS_LAUNCH_FAILED);
  EXPECT_TRUE(contains(says, "cuforge_fake_a: a CUDA launch failed: cudaErrorInvalidConfiguration")) << says;
  EXPECT_TRUE(contains(message_of_check(*library, CUFORGE_STATUS_NOT_SUPPORTED), "cannot run this problem"));
}

TEST(KernelLibrary, ALaunchFailureWithoutAnErrorSaysHowToFindIt) {
  TempDir tmp;
  const auto library = KernelLibrary::load(fake_library(tmp, "cuforge_fake_b", CUFORGE_ABI_VERSION, 0));
  const std::string says = message_of_check(*library, CUFORGE_STATUS_LAUNCH_FAILED);
  EXPECT_TRUE(contains(says, "a CUDA launch failed (CUDA_LAUNCH_BLOCKING=1")) << says;
}

TEST(KernelLibrary, AnotherAbiVersionIsRefused) {
  TempDir tmp;
  const std::string says = test::message_of<DeviceError>(
      [&] { KernelLibrary::load(fake_library(tmp, "cuforge_fake_c", CUFORGE_ABI_VERSION - 1, 0)); });
  EXPECT_TRUE(contains(says, fmt::format("has ABI version {}, expected {}", CUFORGE_ABI_VERSION - 1,
                                         CUFORGE_ABI_VERSION)))
      << says;
}

}  // namespace
}  // namespace cuforge
