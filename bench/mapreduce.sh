#!/usr/bin/env bash
# Replays one hour of SWIM FB-2010 on a 600-host, 3-level tree under each MapReduce scheduler and prints wall time
# and activities per second (issue 16 target: <= 60 s per scheduler on the analytical backend).
# Usage: bench/mapreduce.sh [BUILD_DIR] [SCHEDULERS...]; DURATION=12min replays a shorter window;
# BACKEND=simgrid runs SimGrid's network instead of the flow-level one (BACKEND=analytical, the default).
set -euo pipefail
build=${1:-build}
shift || true
schedulers=${*:-capacity fifo pna hit pat}
out=$(mktemp -d)
bin=$(mktemp)
cp "$build/clustersim" "$bin" && chmod +x "$bin" # a rebuild during the run must not pull the binary away
trap 'rm -rf "$out" "$bin"' EXIT
echo "backend ${BACKEND:-analytical}, window ${DURATION:-1h}"
printf '%-9s %9s %9s %12s %14s %9s %6s %10s\n' scheduler wall_s peak_MiB activities activities/s rounds jobs mean_jct_s
for s in $schedulers; do
  start=$(date +%s.%N)
  /usr/bin/time -f %M -o "$out/$s.rss" "$bin" run bench/mapreduce-fb2010-600.yaml --quiet \
    --set policies.mapreduce="$s" --set backend="${BACKEND:-analytical}" \
    --set workload.mapreduce.trace.duration="${DURATION:-1h}" --out "$out/$s"
  end=$(date +%s.%N)
  python3 - "$out/$s/report.json" "$s" "$start" "$end" "$out/$s.rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[4]) - float(sys.argv[3])
rss = int(open(sys.argv[5]).read().split()[-1]) / 1024
acts = r["breakdown"]["activities"]
m = r["metrics"]
print(f"{sys.argv[2]:<9} {wall:9.1f} {rss:9.0f} {acts:12.0f} {acts / wall:14.0f} {r['breakdown']['scheduling_rounds']:9.0f} "
      f"{m['jobs']:6.0f} {m['mean_jct_s']:10.2f}")
PY
done
