#include "cuforge/core/log.hpp"

#include <cstdio>
#include <memory>
#include <mutex>

namespace cuforge {
namespace {

std::mutex g_mutex;
std::shared_ptr<const LogSink> g_sink;  // copied out under the lock, called outside it

}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_mutex);
  g_sink = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
}

void log(LogLevel level, const std::string& message) {
  std::shared_ptr<const LogSink> sink;
  {
    std::lock_guard lock(g_mutex);
    sink = g_sink;
  }
  if (sink) {
    (*sink)(level, message);
  } else if (level == LogLevel::warning) {
    std::fprintf(stderr, "cuforge: warning: %s\n", message.c_str());
  }
}

}  // namespace cuforge
