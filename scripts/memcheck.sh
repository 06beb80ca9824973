#!/usr/bin/env bash
# Runs GPU tests under compute-sanitizer's memcheck (out-of-bounds and misaligned accesses, CUDA API
# errors), prints its ERROR SUMMARY and exits non-zero on any error.
# The tests run once without the sanitizer first: that builds their kernels into the cache
# (CUFORGE_CACHE_DIR) and checks the results, so that the sanitized run only loads and launches.
# Usage: scripts/memcheck.sh [pytest arguments]   (default: a representative subset)
# On a GPU machine; the Firecracker H200s run compute-sanitizer, gVisor ones do not.
set -euo pipefail
cd "$(dirname "$0")/.."

export CUFORGE_FUZZ_CASES=${CUFORGE_FUZZ_CASES:-40}  # the first cases of the fuzz, with its kernels
if [ $# -eq 0 ]; then
  set -- tests/gpu/test_gemm_gpu.py tests/gpu/test_bad_inputs_gpu.py tests/gpu/test_fuzz_gpu.py \
    -k "awkward_sizes or column_major_c_d or async_run_handle or bad_inputs or fuzz"
fi

# The sanitizer follows child processes (python3 may start the tests' interpreter as one), and nvcc dies of
# SIGSEGV under it (an H100, 2026-12-06), so the sanitized run must start none: its kernels are built by the
# first run, and cuforge must read the toolkit's version from its version.json rather than ask `nvcc
# --version`. A toolkit without one is given a view of itself that has one (symbolic links to its
# directories, nvcc's own version), for both runs, which key kernels as the toolkit itself does.
toolkit=${CUDA_INSTALL_PATH:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}
if [ ! -f "$toolkit/version.json" ]; then
  version=$("$toolkit/bin/nvcc" --version | sed -n 's/.*, V\([0-9][0-9.]*\).*/\1/p')
  view=$(mktemp -d)
  trap 'rm -rf "$view"' EXIT
  ln -s "$toolkit"/* "$view"/
  printf '{"cuda": {"name": "CUDA SDK", "version": "%s"}}\n' "$version" >"$view/version.json"
  export CUDA_INSTALL_PATH=$view
fi

python3 -m pytest "$@" -q -p no:cacheprovider ||
  echo "memcheck: some tests fail even without the sanitizer; running them under it anyway"

log=$(mktemp)
status=0
compute-sanitizer --tool memcheck --target-processes all --require-cuda-init no --error-exitcode 1 \
  python3 -m pytest "$@" -q -p no:cacheprovider 2>&1 | tee "$log" || status=$?
grep "ERROR SUMMARY" "$log" || echo "memcheck: no ERROR SUMMARY in the output (see above)"
exit "$status"
