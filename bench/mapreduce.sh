#!/usr/bin/env bash
# Replays one hour of SWIM FB-2010 on a 600-host, 3-level tree under each MapReduce scheduler and prints wall time
# and SimGrid activities per second (issue 6 target: <= 60 s per scheduler).
# Usage: bench/mapreduce.sh [BUILD_DIR] [SCHEDULERS...]; DURATION=12min replays a shorter window.
set -euo pipefail
build=${1:-build}
shift || true
schedulers=${*:-capacity fifo pna hit pat}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-9s %9s %12s %14s %9s %9s\n' scheduler wall_s activities activities/s rounds jobs
for s in $schedulers; do
  start=$(date +%s.%N)
  "$build/clustersim" run bench/mapreduce-fb2010-600.yaml --quiet --set policies.mapreduce="$s" \
    --set workload.mapreduce.trace.duration="${DURATION:-1h}" --out "$out/$s"
  end=$(date +%s.%N)
  python3 - "$out/$s/report.json" "$s" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[4]) - float(sys.argv[3])
acts = r["breakdown"]["activities"]
print(f"{sys.argv[2]:<9} {wall:9.1f} {acts:12.0f} {acts / wall:14.0f} {r['breakdown']['scheduling_rounds']:9.0f} {r['metrics']['jobs']:9.0f}")
PY
done
