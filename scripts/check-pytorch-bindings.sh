#!/usr/bin/env bash
# Compiles (syntax only, g++) the PyTorch bindings emit.pytorch writes for a GEMM, an SM80 GEMM of f16
# accumulation, a grouped GEMM and the three Conv2d passes, against torch's headers: without a GPU or an
# installed torch, what otherwise only the GPU machine's export tests compile (a constant declared twice in
# the conv binding failed every exported Conv2d module there).
# Usage: scripts/check-pytorch-bindings.sh TORCH_INCLUDE   (a torch wheel's torch/include directory, e.g.
#   pip download torch --no-deps -d /tmp/tw && unzip -q /tmp/tw/torch-*.whl 'torch/include/*' -d /tmp/ti
#   then scripts/check-pytorch-bindings.sh /tmp/ti/torch/include). Needs the CUDA toolkit's headers (nvcc on
#   PATH) and cuforge installed from this tree: the bindings are the installed cuforge's (its templates are
#   compiled into it), the headers they include this checkout's.
set -euo pipefail
usage="usage: scripts/check-pytorch-bindings.sh TORCH_INCLUDE (see the script's first lines for how to fetch it)"
torch_include=$(realpath -e "${1:?$usage}" 2>/dev/null) || { echo "no directory ${1}; $usage" >&2; exit 2; }
[ -f "$torch_include/ATen/ATen.h" ] || { echo "$torch_include holds no ATen/ATen.h; $usage" >&2; exit 2; }
nvcc=$(command -v nvcc) || { echo "needs nvcc on PATH (the CUDA toolkit's headers)" >&2; exit 2; }
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

python3 - "$out" <<'EOF'
import sys

import numpy as np

import cuforge

row = cuforge.LayoutType.RowMajor
plans = {"gemm": cuforge.op.Gemm(element=np.float16, layout=row, cc=90),
         "gemm_sm80_f16": cuforge.op.Gemm(element=np.float16, element_accumulator=np.float16, layout=row, kernel_cc=80),
         "grouped": cuforge.op.GroupedGemm(element=np.float16, layout=row, cc=90),
         **{kind: cuforge.op.Conv2d(kind, element=np.float16) for kind in ("fprop", "dgrad", "wgrad")}}
for name, plan in plans.items():
    with open(f"{sys.argv[1]}/{name}.cpp", "w") as f:
        f.write(plan.construct().pytorch_binding(f"check_{name}"))
EOF

python_include=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
cuda_include=$(dirname "$(dirname "$nvcc")")/include
failed=0
for source in "$out"/*.cpp; do
  # C++20: recent torch refuses older standards (torch.utils.cpp_extension chooses its own on the GPU machine).
  if g++ -std=c++20 -fsyntax-only -Iinclude -I"$torch_include" -I"$torch_include/torch/csrc/api/include" \
      -I"$python_include" -I"$cuda_include" "$source" 2>"$source.log"; then
    echo "$(basename "$source" .cpp): compiles"
  else
    echo "$(basename "$source" .cpp): FAILED"
    grep -m 5 "error" "$source.log" || true  # the first errors (the logs go with the temporary directory)
    failed=1
  fi
done
exit $failed
