#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/), seeds each from the bundled files, and fuzzes each for
# SECONDS (default 60). Inputs that crash, hang or leak are written to tests/corpus/fuzz-regressions/<target>/, which
# ctest replays on every build that has the targets. Usage: scripts/fuzz.sh [SECONDS] [BUILD_DIR]   (make fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build-fuzz}
CXX=${CXX:-clang++} cmake -S . -B "$build" $(command -v ninja >/dev/null && echo -G Ninja) \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCS_FUZZ=ON -DCS_BUILD_TESTS=OFF -DCS_BUILD_CUDA_CALIBRATION=OFF >/dev/null
targets=(scenario set units profile measurements trace import)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
seeds=$build/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{scenario,set,units,profile,measurements,trace,import}
cp scenarios/*.yaml scenarios/reference/*.yaml "$seeds/scenario/"
cp tests/corpus/cases/*.yaml "$seeds/scenario/" 2>/dev/null || true
printf 'cluster.nodes=4\nworkload.parallel.tp=2' >"$seeds/set/a"
printf 'cluster.network.levels[0].oversubscription=2' >"$seeds/set/b"
printf 'workload.model={layers: 4, hidden: 512}' >"$seeds/set/c"
i=0
for u in 80GiB 400Gb/s 1.5us 25Gbps 0.5 12MB 3h; do
  printf '%s' "$u" >"$seeds/units/$i"
  i=$((i + 1))
done
cp calibrate/profiles/*.json "$seeds/profile/"
cp calibrate/measurements/*.json "$seeds/measurements/"
{ printf s; head -c 4000 traces/samples/swim/FB-2009_samples_24_times_1hr_0.tsv; } >"$seeds/trace/swim"
{ printf r; head -c 6000 traces/samples/hadoop/gridmix-wordcount-rumen.json; } >"$seeds/trace/rumen"
{ printf j; cat traces/samples/hadoop/job_1329348432655_0001-sleep-10m-1r.jhist; } >"$seeds/trace/jhist"
{ printf m; cat tests/data/import/mbridge-llama3-70b-fp8.args; } >"$seeds/import/megatron"
{ printf t; cat tests/data/import/torchtitan-llama3-8b.toml; } >"$seeds/import/torchtitan"
export ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=0
status=0
for t in "${targets[@]}"; do
  found=tests/corpus/fuzz-regressions/$t
  mkdir -p "$found" "$build/fuzz-corpus/$t"
  echo "fuzz_$t: $seconds s"
  "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$found/" \
    -print_final_stats=1 "$build/fuzz-corpus/$t" "$seeds/$t" >"$build/fuzz_$t.log" 2>&1 || status=1
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$build/fuzz_$t.log" | tr '\n' ' '
  echo
done
exit $status
