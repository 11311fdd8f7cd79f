#!/usr/bin/env bash
# For a GPU owner: measure this machine's GPU with the CUDA microkernels, fit its profile, regress the fit against
# the measurements, and stage both for a commit. Usage: scripts/calibrate-gpu.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
make build BUILD="$build" >/dev/null
stamp=$(date -u +%Y%m%d)
tmp=$(mktemp)
"$build/clustersim" calibrate --device cuda --out "$tmp"
device=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['device'])" "$tmp")
measurements=calibrate/measurements/$device-$stamp.json
mv "$tmp" "$measurements"
"$build/clustersim" fit "$measurements" --out "calibrate/profiles/$device.json"
"$build/clustersim" regress --profile "calibrate/profiles/$device.json" --measurements "$measurements"
git add "$measurements" "calibrate/profiles/$device.json"
echo "staged $measurements and calibrate/profiles/$device.json: run make test, then commit them"
