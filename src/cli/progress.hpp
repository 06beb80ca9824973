// What the command line says on stderr: messages, and a one-line progress bar for long builds (done/total,
// failures, cache hits, elapsed).
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "cuforge/compile/compiler.hpp"

namespace cuforge::cli {

// A message on stderr. It never throws: where stderr itself is lost (a closed pipe) or memory is, nothing more
// can be said, and a throw from the error handler would abort.
template <class... Args>
void say(fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    const std::string text = fmt::format(format, std::forward<Args>(args)...);
    std::fwrite(text.data(), 1, text.size(), stderr);
  } catch (...) {
  }
}

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
