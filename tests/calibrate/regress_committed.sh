#!/usr/bin/env bash
# Calibration regression (ctest): every committed measurement file against the shipped profile of its device, with
# clustersim regress's default tolerances. A profile edit that moves predictions away from the measurements fails.
# Usage: tests/calibrate/regress_committed.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: regress_committed.sh BUILD_DIR}
cd "$(dirname "$0")/../.."
status=0
for m in calibrate/measurements/*.json; do
  device=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['device'])" "$m")
  profile=calibrate/profiles/$device.json
  if [[ ! -f $profile ]]; then
    echo "$m: no shipped profile for $device"
    status=1
    continue
  fi
  echo "== $m against $profile"
  "$build/clustersim" regress --profile "$profile" --measurements "$m" | tail -2 || status=1
done
exit $status
