// A one-line progress bar on stderr for long builds: done/total, failures, cache hits, elapsed.
#pragma once

#include <chrono>
#include <string>

#include "cuforge/compile/compiler.hpp"

namespace cuforge::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  void update(const compile::BuildProgress& p);
  void finish();

 private:
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  bool tty_;
};

}  // namespace cuforge::cli
