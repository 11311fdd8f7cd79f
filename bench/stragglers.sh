#!/usr/bin/env bash
# sync-training at scale: 1,024 workers x 1,000 steps of partial-reduce (bench/stragglers-1024.yaml) on each backend,
# with wall time, peak RSS and steps per second (issue 15 target: <= 30 s on simgrid). Then, with FIGURE=1, the
# what-if figure of docs/stragglers.md: samples/s of each sync scheme as straggler probability grows (3 seeds).
# Usage: bench/stragglers.sh [BUILD_DIR]; STEPS=200 runs a shorter job.
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-10s %9s %10s %12s %12s\n' backend wall_s peak_MiB steps steps/s
for backend in analytical simgrid; do
  /usr/bin/time -f '%e %M' -o "$out/time" "$build/clustersim" run bench/stragglers-1024.yaml --quiet \
    --backend "$backend" --set workload.steps="${STEPS:-1000}" --out "$out/$backend"
  read -r wall rss < "$out/time"
  python3 - "$out/$backend/report.json" "$backend" "$wall" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
steps = r["breakdown"]["steps"]
wall, rss = float(sys.argv[3]), float(sys.argv[4]) / 1024
print(f"{sys.argv[2]:<10} {wall:9.1f} {rss:10.0f} {steps:12.0f} {steps / wall:12.0f}")
PY
done
if [ "${FIGURE:-0}" = 1 ]; then
  "$build/clustersim" sweep scenarios/stragglers.yaml --jobs "$(nproc)" --seeds 3 --out "$out/sweep" \
    --axis policies.sync_scheme=allreduce,partial-reduce,eager-sgd,ad-psgd,ps-asp,ps-ssp \
    --axis cluster.stragglers.random.probability=0,0.02,0.05,0.1,0.2,0.3 --metric samples_per_s >/dev/null
  "$build/clustersim" plot "$out/sweep/results.csv" --x cluster.stragglers.random.probability --y samples_per_s \
    --by policies.sync_scheme --title "BERT-large, 16 A100s, 300 ms stragglers" --out docs/img/stragglers
  echo "wrote docs/img/stragglers.png and .svg"
fi
