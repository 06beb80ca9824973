#!/usr/bin/env bash
# Copies what a GPU machine without a package registry needs into .deps/ (git-ignored):
# the CUTLASS headers of the installed nvidia-cutlass wheel and the headers of the C++ libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(python3 -c "import importlib.metadata as m; print(m.distribution('nvidia-cutlass').locate_file('cutlass_library/source'))")
rm -rf .deps && mkdir -p .deps/cutlass/tools/util .deps/include
cp -r "$src/include" .deps/cutlass/include
cp -r "$src/tools/util/include" .deps/cutlass/tools/util/include
cp -r /usr/include/nlohmann /usr/include/fmt /usr/include/CLI /usr/include/xxhash.h .deps/include/
du -sh .deps
