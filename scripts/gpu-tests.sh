#!/usr/bin/env bash
# Runs GPU test files within a time budget, in two streams at once so that one stream's nvcc builds
# overlap the other's runs (the lent GPU machine: 16 cores, a call of at most 10 minutes). Each stream
# runs its files in order, each under what is left of the budget; a file the budget does not reach is
# listed as skipped. Logs: $LOGS/A.log, $LOGS/B.log, and one line per file in $LOGS/summary.txt.
# Usage: scripts/gpu-tests.sh SECONDS "file-or-expression ..." "file-or-expression ..."
#   e.g. scripts/gpu-tests.sh 500 "tests/gpu/test_gemm_gpu.py tests/gpu/test_fuzz_gpu.py" \
#                                 "tests/gpu/test_export_gpu.py 'tests/gpu/test_conv2d_gpu.py -k \"dgrad or wgrad\"'"
# (after `source scripts/gpu-machine.sh`; LOGS defaults to $OUT, else ./gpu-test-logs).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PYTHONUNBUFFERED=1
LOGS=${LOGS:-${OUT:-gpu-test-logs}}
mkdir -p "$LOGS"
budget=$1
start=$SECONDS

stream() {  # stream TAG "items": each item a file, or a quoted file with pytest arguments
  local tag=$1 item left t0 rc
  eval "set -- $2"
  for item in "$@"; do
    left=$((budget - (SECONDS - start)))
    if [ "$left" -lt 20 ]; then
      echo "[$tag] $item: skipped, the budget ran out" >>"$LOGS/summary.txt"
      continue
    fi
    t0=$SECONDS
    echo "=== $item" >>"$LOGS/$tag.log"
    # an item's words are pytest's arguments, quoted as in the shell (-k "dgrad or wgrad")
    eval "timeout $left python3 -m pytest -q -rs --tb=short -p no:cacheprovider $item" >>"$LOGS/$tag.log" 2>&1
    rc=$?
    echo "[$tag] $item: rc $rc, $((SECONDS - t0)) s: $(tail -1 "$LOGS/$tag.log")" >>"$LOGS/summary.txt"
  done
}

stream A "$2" &
other=$!
stream B "${3:-}"
wait "$other"
cat "$LOGS/summary.txt"
