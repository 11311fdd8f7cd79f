#!/usr/bin/env bash
# Runs every reference row of validation.md §2, §3, §5 and §6 (its FP8 rows) and prints published / simulated / error with the mean and
# max per section (bench/validate.py). Usage: bench/validate.sh [BUILD_DIR] [--backend simgrid|analytical] [--fast]
set -euo pipefail
build=${1:-build}
shift || true
exec python3 "$(dirname "$0")/validate.py" --build "$build" "$@"
