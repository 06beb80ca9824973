// The error types of cuforge. Every refusal names the operand or setting, what was expected and
// what was given; the Python module maps each type onto an exception class of the same name.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace cuforge {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A value, shape, stride, alignment or setting the operation cannot accept (Python: ValueError).
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};

// An operand whose data type differs from the one the plan was built for (Python: TypeError).
class DataTypeError : public Error {
 public:
  using Error::Error;
};

// nvcc, CUDA or the CUTLASS headers are missing or of the wrong version.
class ToolchainError : public Error {
 public:
  using Error::Error;
};

// No GPU, a GPU the plan cannot target, or a CUDA call that failed.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// The kernel cache directory is unusable (permissions, ownership, a full disk).
class CacheError : public Error {
 public:
  using Error::Error;
};

// A build the caller interrupted (compile::set_interrupt_check; Python: KeyboardInterrupt).
class Interrupted : public Error {
 public:
  using Error::Error;
};

// nvcc rejected an emitted kernel: carries the compiler's log and the kept source.
class CompilationError : public Error {
 public:
  CompilationError(const std::string& message, std::string log, std::filesystem::path source)
      : Error(message), log_(std::move(log)), source_(std::move(source)) {}
  const std::string& log() const { return log_; }
  const std::filesystem::path& source_path() const { return source_; }

 private:
  std::string log_;
  std::filesystem::path source_;
};

}  // namespace cuforge
