#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace cuforge::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), start_(std::chrono::steady_clock::now()), tty_(::isatty(2)) {}

void ProgressBar::update(const compile::BuildProgress& p) {
  constexpr int kWidth = 30;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int filled = p.total ? int(kWidth * p.done / p.total) : kWidth;
  std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
  std::string line = fmt::format("{} [{}] {}/{}  {} cached  {} failed  {:.0f}s  {}", label_, bar, p.done, p.total,
                                 p.cache_hits, p.failed, seconds, p.last_name ? *p.last_name : "");
  // On a terminal redraw one line; in a log print one line per finished kernel.
  if (tty_)
    say("\r\33[2K{}", line);
  else
    say("{}\n", line);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (tty_) say("\n");
}

}  // namespace cuforge::cli
