#!/usr/bin/env bash
# MoE training at scale (issue 14): one iteration of a 64-expert top-2 GPT on 1,024 H100s, EP 64 across nodes
# (bench/moe-1024.yaml), on each backend, with wall time and peak RSS (targets: <= 0.5 s analytical, <= 10 s
# simgrid); then the planner over EP and ETP (and the rest) on Mixtral (8 layers) over 8 H100s, every plan simulated
# (target: >= 500 plans in <= 60 s).
# Usage: bench/moe.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-10s %9s %10s %10s %14s\n' backend wall_s peak_MiB tasks iteration_s
for backend in analytical simgrid; do
  /usr/bin/time -f '%e %M' -o "$out/time" "$build/clustersim" run bench/moe-1024.yaml --quiet --backend "$backend" \
    --out "$out/$backend"
  read -r wall rss < "$out/time"
  python3 - "$out/$backend/report.json" "$backend" "$wall" "$rss" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
print(f"{sys.argv[2]:<10} {float(sys.argv[3]):9.2f} {float(sys.argv[4]) / 1024:10.0f} {m['task_count']:10.0f} "
      f"{m['iteration_time_s']:14.4f}")
PY
done
start=$(date +%s.%N)
"$build/clustersim" plan scenarios/moe-mixtral.yaml --gpus 8 --exhaustive --top 1 --set workload.model.layers=8 \
  --set workload.batch.global=16 | sed -n 2p
end=$(date +%s.%N)
python3 -c "import sys; print(f'planner wall {float(sys.argv[2]) - float(sys.argv[1]):.2f} s')" "$start" "$end"
