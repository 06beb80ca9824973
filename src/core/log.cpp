#include "cuforge/core/log.hpp"

#include <cstdio>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace cuforge {
namespace {

std::mutex g_mutex;
std::shared_ptr<const LogSink> g_sink;  // copied out under the lock, called outside it

}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_mutex);
  g_sink = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
}

std::string printable(const std::string& text, bool keep_lines) {
  std::string out;
  for (unsigned char ch : text) {
    const bool kept = keep_lines && (ch == '\n' || ch == '\t');
    out += (ch < 0x20 && !kept) || ch == 0x7f ? fmt::format("\\x{:02x}", ch) : std::string(1, char(ch));
  }
  return out;
}

void log(LogLevel level, const std::string& text) {
  const std::string message = printable(text, true);
  std::shared_ptr<const LogSink> sink;
  {
    std::lock_guard lock(g_mutex);
    sink = g_sink;
  }
  if (sink) {
    try {
      (*sink)(level, message);
      return;
    } catch (...) {  // a sink that throws: logging never does (it runs in destructors and on build threads)
    }
  }
  if (level == LogLevel::warning) std::fprintf(stderr, "cuforge: warning: %s\n", message.c_str());
}

}  // namespace cuforge
