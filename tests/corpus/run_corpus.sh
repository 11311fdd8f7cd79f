#!/usr/bin/env bash
# Runs every case of tests/corpus/cases.tsv and checks clustersim refused it cleanly: exit 2, exactly one line on
# stderr of the form file:line:col: message, and nothing written to the case's output folder. Prints a tally by
# outcome (clean, accepted, failed run, crash, hang) and every case that was not clean; exits 1 if any. SHARD K/N
# runs every N-th case from the K-th (ctest runs the corpus as N shards, so the cases spread over the cores).
# Usage: tests/corpus/run_corpus.sh BUILD_DIR [NAME_FILTER] [SHARD]
set -uo pipefail
build=$(cd "${1:?usage: run_corpus.sh BUILD_DIR}" && pwd)
filter=${2:-}
shard=${3:-0/1}
shard_index=${shard%/*}
shard_count=${shard#*/}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A tally=()
bad=()
total=0
seen=0
while IFS=$'\t' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ -n "$filter" && "$name" != *"$filter"* ]] && continue
  seen=$((seen + 1))
  (( (seen - 1) % shard_count == shard_index )) || continue
  total=$((total + 1))
  out="$work/out-$total"
  command="${args//\{OUT\}/$out}"
  # Two processes a case (timeout and clustersim); the checks are bash builtins, since process creation is what a
  # slow CI machine pays most for.
  eval "timeout -s KILL 60 \"$build/clustersim\" $command" >"$work/stdout" 2>"$work/stderr"
  rc=$?
  mapfile -t err <"$work/stderr"
  if [[ $rc -eq 2 && ${#err[@]} -eq 1 && ${err[0]} =~ ^[^:]+:[0-9]+:[0-9]+:\  && ! -e "$out" ]]; then
    outcome=clean
  elif [[ $rc -eq 2 ]]; then
    outcome="exit 2 without one positioned line, or with output written"
  elif [[ $rc -eq 0 ]]; then
    outcome="accepted (exit 0)"
  elif [[ $rc -eq 1 ]]; then
    outcome="failed run (exit 1)"
  elif [[ $rc -eq 137 ]]; then
    outcome="hang or out of memory (killed after 60 s)"
  else
    outcome="crash (exit $rc)"
  fi
  tally[$outcome]=$(( ${tally[$outcome]:-0} + 1 ))
  if [[ $outcome != clean ]]; then
    joined="${err[*]}"
    bad+=("$name: $outcome: ${joined:0:300}")
  fi
done <tests/corpus/cases.tsv
echo "malformed-input corpus: $total cases (shard $shard)"
for outcome in "${!tally[@]}"; do
  printf '  %-60s %d\n' "$outcome" "${tally[$outcome]}"
done | sort
for b in "${bad[@]}"; do
  echo "  NOT CLEAN $b"
done
[[ ${#bad[@]} -eq 0 ]]
