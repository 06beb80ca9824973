#!/usr/bin/env bash
# Installs cuforge on a GPU machine that has no package registry (the lent H200): the CUTLASS
# headers and the header-only C++ dependencies travel in .deps/ (made here by
# scripts/vendor-deps.sh), the Python toolchain (nanobind, scikit-build-core) is already there.
# Usage: source scripts/gpu-machine.sh   (then run tests or benchmarks)
set -e
export CUTLASS_PATH=$PWD/.deps/cutlass
export CUFORGE_CACHE_DIR=${CUFORGE_CACHE_DIR:-/tmp/cuforge-cache}
CMAKE_ARGS="-DCUFORGE_DEPS_INCLUDE=$PWD/.deps/include" \
  python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tail -3
# The notebook runner (scripts/run-notebooks), from the wheels vendored beside the headers.
if [ -d .deps/wheels ]; then
  python3 -m pip install -q --no-index --find-links .deps/wheels nbclient nbformat ipykernel 2>&1 | tail -3
fi
set +e
