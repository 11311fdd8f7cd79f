#!/usr/bin/env bash
# Frontier MoE steps as they run today, with wall time and peak RSS (issue 41's targets: DeepSeek-V3-like on 2,048
# GPUs within 10 s and 2 GiB, on 16,384 within 30 s and 4 GiB; the simgrid backend within 10x of the analytical
# one): DeepSeek-V3 on 2,048 H800 as its report trained it (bench/scenarios/deepseek-v3-2048-h800.yaml) on both
# backends, the same recipe on 16,384 and behind 4:1 leaf uplinks (folded, each flow with its copies' share of them),
# Megatron-Bridge's Qwen3-30B-A3B row on 16 H100 on both backends, and the DeepSeek-V3 recipe under Zipf routing (both
# folds). Figures, not a test. Usage: bench/frontier.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/timed_run.sh"
run_scenario "Qwen3-30B-A3B EP 16, 16 H100, analytical" scenarios/reference/mbridge-qwen3-30b-a3b-fp8.yaml
run_scenario "Qwen3-30B-A3B EP 16, 16 H100, simgrid" scenarios/reference/mbridge-qwen3-30b-a3b-fp8.yaml \
  --backend simgrid
run_scenario "Qwen3-30B-A3B EP 16, 16 H100, simgrid, replica 0 for all" \
  scenarios/reference/mbridge-qwen3-30b-a3b-fp8.yaml --backend simgrid --replicas one
run_scenario "DeepSeek-V3 PP 16 EP 64 DP 128, 2,048 H800" bench/scenarios/deepseek-v3-2048-h800.yaml
run_scenario "DeepSeek-V3 PP 16 EP 64 DP 128, 2,048 H800, simgrid, replica 0 for all" \
  bench/scenarios/deepseek-v3-2048-h800.yaml --backend simgrid --replicas one
run_scenario "DeepSeek-V3 PP 16 EP 64 DP 1,024, 16,384 H800" bench/scenarios/deepseek-v3-16384-h800.yaml
run_scenario "DeepSeek-V3 PP 16 EP 64 DP 128, 2,048 H800, leaf uplinks 4:1, replica 0 for all" \
  bench/scenarios/deepseek-v3-2048-h800.yaml --set 'cluster.network.levels[0].oversubscription=4'
# Skewed routing (Zipf, skew 1): under 1F1B replica 0 runs its EP group's slowest rank each step; under DualPipe, whose
# paired ops need every rank, the slowest group's 64 replicas are built (docs/moe.md).
run_scenario "DeepSeek-V3, 2,048 H800, Zipf routing, 1F1B, slowest rank" \
  bench/scenarios/deepseek-v3-2048-h800.yaml --set policies.moe_routing=zipf --set policies.pipeline=1f1b
run_scenario "DeepSeek-V3, 2,048 H800, Zipf routing, DualPipe, slowest group" \
  bench/scenarios/deepseek-v3-2048-h800.yaml --set policies.moe_routing=zipf
