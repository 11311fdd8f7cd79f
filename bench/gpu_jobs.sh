#!/usr/bin/env bash
# The whole Philly trace (82,247 jobs) on 2,000 GPUs under each queue policy and placement: wall time, peak RSS and
# the headline metrics (issue 17 target: <= 60 s per policy). Reads traces/samples/gpu-jobs/philly.csv.gz.
# Usage: bench/gpu_jobs.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-9s %-15s %7s %9s %8s %12s %12s %6s %6s\n' queue placement wall_s peak_MiB jobs mean_wait_s mean_jct_s util frag
for q in fifo sjf backfill; do
  for p in consolidated spread topology-aware; do
    /usr/bin/time -f '%e %M' -o "$out/time" "$build/clustersim" run bench/gpu-jobs-philly-2000.yaml --quiet \
      --set policies.cluster="$q" --set policies.placement="$p" --out "$out/run"
    read -r wall rss < "$out/time"
    python3 - "$out/run/report.json" "$q" "$p" "$wall" "$rss" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
print(f"{sys.argv[2]:<9} {sys.argv[3]:<15} {float(sys.argv[4]):7.1f} {float(sys.argv[5]) / 1024:9.0f} {m['jobs']:8.0f} "
      f"{m['mean_queueing_delay_s']:12.0f} {m['mean_jct_s']:12.0f} {m['gpu_utilization']:6.3f} {m['fragmentation']:6.3f}")
PY
  done
done
