#!/usr/bin/env bash
# Frontier MoE steps as they run today, with wall time and peak RSS (issue 41's targets: DeepSeek-V3-like on 2,048
# GPUs within 10 s and 2 GiB; the simgrid backend within 10x of the analytical one): DeepSeek-V3 on 2,048 H800 as its
# report trained it (bench/scenarios/deepseek-v3-2048-h800.yaml), and Megatron-Bridge's Qwen3-30B-A3B row on 16 H100
# on both backends. Figures, not a test. Usage: bench/frontier.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run_scenario() {
  local label=$1 file=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$out/time" "$build/clustersim" run "$file" --quiet --out "$out/run" "$@" || {
    echo "$label: failed (exit $?)"
    return
  }
  read -r wall rss <"$out/time"
  python3 - "$label" "$wall" "$rss" "$out/run/report.json" <<'PY'
import json, sys
label, wall, rss, report = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), json.load(open(sys.argv[4]))
m = report["metrics"]
print(f"{label:<48} {int(m['task_count']):>9} tasks  step {m['iteration_time_s']:.2f} s  "
      f"{m['tokens_per_s']:,.0f} tokens/s in all  wall {wall:6.2f} s  peak RSS {rss / 1024 / 1024:.2f} GiB")
PY
}
run_scenario "Qwen3-30B-A3B EP 16, 16 H100, analytical" scenarios/reference/mbridge-qwen3-30b-a3b-fp8.yaml
run_scenario "Qwen3-30B-A3B EP 16, 16 H100, simgrid" scenarios/reference/mbridge-qwen3-30b-a3b-fp8.yaml \
  --backend simgrid
run_scenario "DeepSeek-V3 PP 16 EP 64 DP 128, 2,048 H800" bench/scenarios/deepseek-v3-2048-h800.yaml
