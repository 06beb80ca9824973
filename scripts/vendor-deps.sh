#!/usr/bin/env bash
# Copies what a GPU machine without a package registry needs into .deps/ (git-ignored):
# the CUTLASS headers of the installed nvidia-cutlass wheel, the headers of the C++ libraries, and
# the wheels of the notebook runner (nbclient, ipykernel) for the GPU machine's Python 3.12.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(python3 -c "import importlib.metadata as m; print(m.distribution('nvidia-cutlass').locate_file('cutlass_library/source'))")
rm -rf .deps && mkdir -p .deps/cutlass/tools/util .deps/include
cp -r "$src/include" .deps/cutlass/include
cp -r "$src/tools/util/include" .deps/cutlass/tools/util/include
cp -r /usr/include/nlohmann /usr/include/fmt /usr/include/CLI /usr/include/xxhash.h .deps/include/
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
  --platform manylinux_2_28_x86_64 --platform any -d .deps/wheels nbclient nbformat ipykernel
du -sh .deps
