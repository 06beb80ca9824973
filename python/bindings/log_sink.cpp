#include "log_sink.hpp"

#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuforge/core/log.hpp"

namespace cuforge::python {
namespace nb = nanobind;
using namespace nb::literals;

namespace {

// The Python sink of the core's messages. A thread holding the GIL calls it at once; one that does not (a
// build or a measurement that let the GIL go, a worker thread of the core's) queues the message for the
// interpreter to deliver (Py_AddPendingCall, in the main thread): waiting for the GIL there could deadlock,
// as that thread may hold a lock of the core's (a plan's, a cache key's) that the GIL's holder waits for.
struct PythonLog;
PythonLog& python_log();

struct PythonLog {
  std::mutex mutex;
  std::function<void(int, std::string)> sink;  // set and copied with the GIL held
  std::vector<std::pair<LogLevel, std::string>> queued;
  std::atomic<bool> any_queued{false};  // read without the mutex, on every run's way back
  bool scheduled = false;

  void log(LogLevel level, const std::string& message) {
    if (PyGILState_Check()) {
      deliver_queued();
      deliver(level, message);
      return;
    }
    std::lock_guard lock(mutex);
    queued.emplace_back(level, message);
    any_queued.store(true, std::memory_order_release);
    if (!scheduled) scheduled = Py_AddPendingCall([](void*) { return python_log().deliver_queued(), 0; }, nullptr) == 0;
  }

  // The GIL held.
  void deliver_queued() {
    if (!any_queued.load(std::memory_order_acquire)) return;
    std::vector<std::pair<LogLevel, std::string>> messages;
    {
      std::lock_guard lock(mutex);
      messages.swap(queued);
      any_queued.store(false, std::memory_order_relaxed);
      scheduled = false;
    }
    for (const auto& [level, message] : messages) deliver(level, message);
  }

  void deliver(LogLevel level, const std::string& message) {
    std::function<void(int, std::string)> to;
    {
      std::lock_guard lock(mutex);
      to = sink;
    }
    if (!to) return;
    // A message quoting bytes that are not UTF-8 (an environment variable's value, say) reaches Python with
    // those bytes escaped, not as a UnicodeDecodeError in place of the message.
    std::string text = message;
    if (PyObject* decoded = PyUnicode_DecodeUTF8(message.data(), Py_ssize_t(message.size()), "backslashreplace"))
      text = nb::steal<nb::str>(decoded).c_str();
    else
      PyErr_Clear();
    try {
      to(int(level), text);
    } catch (nb::python_error& e) {  // a failing logger must not break a build, nor fail unseen
      if (e.matches(PyExc_KeyboardInterrupt)) {
        PyErr_SetInterrupt();  // a Ctrl-C the logger's Python code happened to meet: raised at the next chance
        return;
      }
      e.discard_as_unraisable("cuforge's log sink");
    }
  }
};

PythonLog& python_log() {
  static PythonLog* log = new PythonLog();  // never destroyed: the interpreter may deliver to it until exit
  return *log;
}

}  // namespace

void deliver_queued_log() { python_log().deliver_queued(); }

void bind_log(nb::module_& m) {
  m.def("set_log_sink",
        [](std::function<void(int, std::string)> sink) {
          python_log().deliver_queued();  // what was queued goes to the sink it was meant for
          const bool to_python = bool(sink);
          {
            std::lock_guard lock(python_log().mutex);
            std::swap(python_log().sink, sink);  // the old one let go below, outside the lock
          }
          if (!to_python) return set_log_sink({});
          set_log_sink([](LogLevel level, const std::string& message) { python_log().log(level, message); });
        },
        "sink"_a.none(),
        "Route the core's messages to sink(level, message): 0 debug, 1 info, 2 warning; None restores stderr.");
}

}  // namespace cuforge::python
