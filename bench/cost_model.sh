#!/usr/bin/env bash
# Prints kernel cost-model predictions per second (issue 3 target: >= 1M). Usage: bench/cost_model.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build}
"$build/bench_cost_model" "${2:-1000000}"
