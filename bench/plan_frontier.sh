#!/usr/bin/env bash
# The planner at frontier scale (issue 41 item 3; target <= 10 s each): the best 3 plans for DeepSeek-V3 as its report
# trained it (bench/scenarios/deepseek-v3-2048-h800.yaml) and for Llama 3 405B (scenarios/llama3-405b-goodput.yaml),
# both on 2,048 GPUs, with the plan counts, the best plan, wall time and peak RSS; then DeepSeek-V3 over three token
# dispatchers (--dispatchers, opt-in: three times the plans). Usage: bench/plan_frontier.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
plan() {
  local label=$1 file=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$out/time" "$build/clustersim" plan "$file" --gpus 2048 --top 3 "$@" >"$out/plan.txt" \
    2>/dev/null
  read -r wall rss <"$out/time"
  echo "$label: wall $wall s, peak RSS $(python3 -c "print(f'{$rss / 1024 / 1024:.2f}')") GiB"
  sed -n '2p;5p' "$out/plan.txt"
}
plan "DeepSeek-V3, 2,048 H800" bench/scenarios/deepseek-v3-2048-h800.yaml
plan "Llama 3 405B, 2,048 H100" scenarios/llama3-405b-goodput.yaml
plan "DeepSeek-V3, 2,048 H800, three dispatchers" bench/scenarios/deepseek-v3-2048-h800.yaml \
  --dispatchers deepep,hybridep,alltoall
