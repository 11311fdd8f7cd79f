#!/usr/bin/env bash
# Prints engine throughput figures (DESIGN.md §2, issue 2 targets). Usage: bench/engine.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
"$build/bench_engine" "${2:-20}"
