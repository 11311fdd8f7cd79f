#!/usr/bin/env bash
# Prints how many candidate plans `clustersim plan --exhaustive` simulates and how long it takes (issue 5 target:
# >= 500 plans in <= 60 s). Usage: bench/plan.sh [BUILD_DIR] [GPUS]
set -euo pipefail
build=${1:-build}
gpus=${2:-64}
start=$(date +%s.%N)
"$build/clustersim" plan scenarios/reference/megatron-7.5b.yaml --gpus "$gpus" --exhaustive --top 3 | sed -n 2p
end=$(date +%s.%N)
python3 -c "import sys; print(f'wall {float(sys.argv[2]) - float(sys.argv[1]):.2f} s (whole command)')" "$start" "$end"
