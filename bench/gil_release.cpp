// What letting the GIL go around a call costs: one PyEval_SaveThread and PyEval_RestoreThread, as the
// bindings' WithoutGil does around every run (python/bindings/log_sink.hpp), timed in an embedded
// interpreter with no other thread (uncontended), nanoseconds per pair, three rounds of 10^7 pairs.
//   PY=python3; g++ -O2 -I$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])") \
//     bench/gil_release.cpp -L$($PY -c "import sysconfig; print(sysconfig.get_config_var('LIBDIR'))") \
//     -lpython$($PY -c "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')") \
//     -Wl,-rpath,$($PY -c "import sysconfig; print(sysconfig.get_config_var('LIBDIR'))") -o /tmp/gil_release \
//     && /tmp/gil_release
#include <Python.h>

#include <chrono>
#include <cstdio>

int main() {
  Py_Initialize();
  constexpr int kPairs = 10000000;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kPairs; ++i) PyEval_RestoreThread(PyEval_SaveThread());
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    std::printf("release and take of the GIL: %.1f ns\n", took.count() / kPairs);
  }
  Py_Finalize();
}
