#!/usr/bin/env bash
# The load sweep of docs/mapreduce.md: the SWIM FB-2010 hour (scenarios/reference/mapreduce-swim-hour.yaml) with
# its bytes scaled 1x to 10x, under Capacity, Hit and PAT; prints each scheduler's change against Capacity next to
# the cluster's container utilisation. Heavier loads take minutes per run (5x: 1.5-5 min, 10x: 10-16 min on 2 cores).
# Usage: bench/mapreduce_load.sh [BUILD_DIR] [OUT_DIR] [SCALES, default 1,2,5,10]
set -euo pipefail
build=${1:-build}
out=${2:-out/mapreduce-load}
factors=${3:-1,2,5,10}
scales=$(python3 -c "print(','.join(f'{0.0267*float(f):.4g}' for f in '$factors'.split(',')))")
"$build/clustersim" sweep scenarios/reference/mapreduce-swim-hour.yaml --axis "workload.mapreduce.trace.scale=$scales" \
  --axis policies.mapreduce=capacity,hit,pat --jobs 2 --by policies.mapreduce --metric mean_jct_s --out "$out" >&2
python3 - "$out/results.jsonl" <<'PY'
import collections, json, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["status"] == "ok":
        runs[float(r["settings"]["workload.mapreduce.trace.scale"])][r["settings"]["policies.mapreduce"]] = r["metrics"]
print(f"{'load':>5} {'util':>6} {'capacity JCT':>13} {'Hit JCT':>8} {'Hit traffic':>12} {'PAT JCT':>8} {'PAT comm':>9}")
for scale in sorted(runs):
    m = runs[scale]
    if not {"capacity", "hit", "pat"} <= m.keys():
        continue
    c = m["capacity"]
    change = lambda p, k: f"{100 * (m[p][k] / c[k] - 1):+.1f}%"
    print(f"{scale / 0.0267:4.0f}x {100 * c['utilization']:5.1f}% {c['mean_jct_s']:12.1f}s {change('hit', 'mean_jct_s'):>8} "
          f"{change('hit', 'traffic_cost'):>12} {change('pat', 'mean_jct_s'):>8} {change('pat', 'communication_cost'):>9}")
PY
