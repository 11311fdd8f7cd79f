#!/usr/bin/env bash
# Prints wall time to simulate a 1 GiB all-to-all on 64/256/1024 GPUs on both backends (issue 4 targets).
# Usage: bench/alltoall.sh [BUILD_DIR] [BYTES]
set -euo pipefail
build=${1:-build}
"$build/bench_alltoall" "${2:-1073741824}"
