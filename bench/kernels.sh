#!/usr/bin/env bash
# Kernel microbenchmarks (bench/test_bench_*.py, pytest-benchmark): run them, save the JSON
# under bench/results/kernels/, and compare with the previous saved run when there is one.
#
#   bench/kernels.sh                    # run, save, compare with the previous saved run
#   bench/kernels.sh --compare 0001     # compare with saved run 0001 instead
#   bench/kernels.sh --fail-slower 25   # exit 1 when a median got >25% slower than it
#   bench/kernels.sh -k dense_ranks     # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
compare=""
fail=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compare) compare="$2"; shift 2 ;;
    --fail-slower) fail="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
storage=bench/results/kernels
opts=(--benchmark-enable --benchmark-only "--benchmark-storage=file://$storage"
      --benchmark-autosave --benchmark-columns=min,median,iqr,rounds --benchmark-sort=name)
if [ -n "$compare" ]; then
  opts+=("--benchmark-compare=$compare")
elif compgen -G "$storage/*/*.json" >/dev/null; then
  opts+=(--benchmark-compare)  # the latest saved run
fi
[ -n "$fail" ] && opts+=("--benchmark-compare-fail=median:${fail}%")
exec .venv/bin/python -m pytest -q -p no:cacheprovider bench/test_bench_*.py "${opts[@]}" "${args[@]}"
