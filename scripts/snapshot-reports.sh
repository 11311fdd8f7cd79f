#!/usr/bin/env bash
# Runs every example and reference scenario on both backends and keeps each report.json without its wall time,
# so that a refactoring can be checked to leave every number unchanged: snapshot before, snapshot after, diff -r.
# Usage: scripts/snapshot-reports.sh BUILD_DIR OUT_DIR [--skip-slow]
set -euo pipefail
build=${1:?build dir}; out=${2:?output dir}; skip_slow=${3:-}
bin="$build/clustersim"
mkdir -p "$out"
for f in scenarios/*.yaml scenarios/reference/*.yaml; do
  name=$(basename "$f" .yaml)
  case "$name" in mapreduce-swim-hour) [ "$skip_slow" = --skip-slow ] && continue ;; esac
  for backend in simgrid analytical; do
    if grep -q 'mapreduce' "$f" && [ "$backend" = analytical ]; then continue; fi
    dir=$(mktemp -d)
    if "$bin" run "$f" --backend "$backend" --out "$dir" --quiet >"$dir/stdout" 2>"$dir/stderr"; then
      grep -v '"wall_time_s"' "$dir/report.json" | sed 's/,$//' > "$out/$name.$backend.json"
    else
      echo "exit $?: $(head -c 300 "$dir/stderr")" > "$out/$name.$backend.json"
    fi
    rm -rf "$dir"
  done
done
echo "snapshot in $out: $(ls "$out" | wc -l) reports"
