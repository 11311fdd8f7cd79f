#!/usr/bin/env bash
# Prints the long run of Llama 3 405B (16,384 H100, 54 days, 20 seeds, the optimal-interval search of 41 intervals)
# with wall time and peak RSS (issue 42 target: 54 days x 16,384 GPUs x 20 seeds <= 10 s, the step included).
# Usage: bench/goodput.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
/usr/bin/time -o "$out/time" -f "wall %e s, peak RSS %M KiB (whole command: the step, then 41 intervals x 20 seeds)" \
  "$build/clustersim" goodput scenarios/llama3-405b-goodput.yaml --days 54 --seeds 20 --out "$out" | sed -n 2,6p
cat "$out/time"
rm -rf "$out"
