// The core's messages into Python's logging (cuforge._core.set_log_sink), without deadlocking on the GIL.
#pragma once

#include <nanobind/nanobind.h>

namespace cuforge::python {

void bind_log(nanobind::module_& m);

// With the GIL held: delivers at once what the core queued while threads ran without it.
void deliver_queued_log();

// The GIL let go for a scope (a build, a run, a wait); once it is taken back, what the core logged
// meanwhile is delivered, so that a call's messages arrive before it returns (or raises), whichever
// thread made it; one that another thread's delivery took a moment before is that thread's to deliver.
// Without this the interpreter delivers them from the main thread when it next runs. A daemon thread
// coming back here while the interpreter finalizes is ended by Python (the process aborts), as in
// every extension that lets the GIL go.
class WithoutGil {
 public:
  WithoutGil() = default;
  WithoutGil(const WithoutGil&) = delete;
  WithoutGil& operator=(const WithoutGil&) = delete;

 private:
  struct Deliver {
    ~Deliver() { deliver_queued_log(); }
  };
  Deliver deliver_;                          // destroyed last: the GIL held again
  nanobind::gil_scoped_release release_{};  // destroyed first
};

}  // namespace cuforge::python
