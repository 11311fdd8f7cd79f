#!/usr/bin/env bash
# Prints the ten slowest tests of the last ctest run in BUILD_DIR (`make test` ends with it), so that a test that
# grows slow is seen by whoever made it so.
# Usage: scripts/slowest-tests.sh BUILD_DIR
set -u
log=${1:?usage: slowest-tests.sh BUILD_DIR}/Testing/Temporary/LastTest.log
[ -f "$log" ] || exit 0
echo "Slowest tests (seconds):"
awk '/^[0-9]+\/[0-9]+ Test: / { name = $3 } /^Test time = / { printf "%8.1f  %s\n", $4, name }' "$log" |
  sort -rn | head -10
