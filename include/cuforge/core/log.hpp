// Where the core reports what it decided and what it noticed (a kernel chosen, a cache entry
// rebuilt): a sink the front ends replace (Python routes it to the `cuforge` logger). By default
// warnings go to standard error and the rest is dropped; so does a warning whose sink throws (log() never
// throws: it runs in destructors and on build threads). Messages reach the sink printable: the text they
// quote (a tuning record's keys, a file's name) may hold control characters (their lines and tabs kept: nvcc's
// log in a CompilationError's message).
#pragma once

#include <functional>
#include <string>

namespace cuforge {

enum class LogLevel { debug, info, warning };

using LogSink = std::function<void(LogLevel, const std::string&)>;
void set_log_sink(LogSink sink);  // an empty sink restores the default
void log(LogLevel level, const std::string& message);

// Text as a terminal may show it: control characters (an ESC that would clear the screen) escaped as \xNN, but
// newlines and tabs where `keep_lines`.
std::string printable(const std::string& text, bool keep_lines = false);

}  // namespace cuforge
