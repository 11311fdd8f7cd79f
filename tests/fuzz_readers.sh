#!/usr/bin/env bash
# CI fuzz smoke (ctest Fuzz.InputReadersSmoke): builds the units, trace-reader, profile, measurement and
# job-trace (GPU jobs, Kineto, Chakra, MoE routing, Spark event logs, step times) libFuzzer targets (fuzz/) with clang
# straight from their sources (no second CMake build), and the scenario and --set targets from the scenario-level
# readers' sources linked against BUILD_DIR's engine libraries; replays the kept regressions, then fuzzes each for
# SECONDS from seeds made of the bundled files. A crash, hang or sanitizer report fails; no clang or libFuzzer on
# this host skips (exit 77). `make fuzz` builds every target fully instrumented.
# Usage: tests/fuzz_readers.sh WORK_DIR SECONDS BUILD_DIR (BUILD_DIR holds the generated profiles)
set -uo pipefail
work=${1:?usage: fuzz_readers.sh WORK_DIR SECONDS BUILD_DIR}
seconds=${2:-15}
build=${3:?usage: fuzz_readers.sh WORK_DIR SECONDS BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
command -v clang++ >/dev/null || { echo "no clang++: skipped"; exit 77; }
mkdir -p "$work"
flags=(-std=c++20 -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$root")
# Every reader source is compiled once, two at a time, into $work/obj (its name the path with / as _), then each
# target links the objects it needs: the targets share most of their sources. No -g: a report names the functions.
protoc --cpp_out="$work" -I"$root/traces" "$root/traces/chakra_et.proto" >"$work/build_protoc.log" 2>&1 || {
  cat "$work/build_protoc.log"; exit 1; }
base=(base/units.cpp base/input_file.cpp)
traces=(traces/trace_format.cpp traces/compressed_input.cpp traces/trace_job.cpp traces/swim_reader.cpp
        traces/rumen_reader.cpp traces/jhist_reader.cpp)
json=(base/json_input.cpp base/input_file.cpp)
job_traces=(base/json_input.cpp base/input_file.cpp base/units.cpp base/yaml_reader.cpp base/utf8.cpp
            platform/stragglers.cpp traces/gpu_job_trace.cpp traces/kineto_trace.cpp traces/compressed_input.cpp
            traces/moe_routing_trace.cpp traces/spark_event_log.cpp traces/chakra_trace.cpp traces/trace_format.cpp
            chakra_et.pb.cc)
# The scenario and --set targets: the scenario-level readers (YAML, units, cluster, checks) compiled here with the
# fuzzer's coverage and the sanitizers, linked against the engine's libraries from BUILD_DIR (gcc-built, so the
# workload kinds' own readers run uninstrumented: their crashes are caught, their coverage does not steer).
shared=(sim/scenario/scenario.cpp base/yaml_reader.cpp base/utf8.cpp base/units.cpp platform/cluster_params.cpp
        sim/run/scenario_checks.cpp)
object() { echo "$work/obj/${1//\//_}.o"; }
source_of() {
  case $1 in chakra_et.pb.cc) echo "$work/$1" ;; generated/*) echo "$build/$1" ;; *) echo "$root/$1" ;; esac
}
mkdir -p "$work/obj"
printf '%s\n' "${base[@]}" "${traces[@]}" "${json[@]}" models/cost/device_profile.cpp generated/builtin_profiles.cpp \
  calibrate/fit/measurements.cpp models/kernels/kernel.cpp "${job_traces[@]}" "${shared[@]}" | sort -u >"$work/sources"
ok=1
while read -r f; do
  printf '%s\0%s\0' "$(source_of "$f")" "$(object "$f")"
done <"$work/sources" | xargs -0 -n 2 -P 2 sh -c 'clang++ -std=c++20 -O1 -fsanitize=fuzzer-no-link,address,undefined \
  -fno-sanitize-recover=undefined -I"$0" -I"$1" -isystem "$2" -c "$3" -o "$4" >"$4.log" 2>&1 ||
  { cat "$4.log"; exit 255; }' \
  "$root" "$work" "$build/traces" >"$work/build_objects.log" 2>&1 || ok=0
link() { # NAME SOURCES... -- LIBS...: the target from its objects
  local name=$1 objects=() f
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do objects+=("$(object "$1")"); shift; done
  shift
  clang++ "${flags[@]}" "$root/fuzz/fuzz_$name.cpp" "${objects[@]}" "$@" -lfmt -lz -lzstd -o "$work/fuzz_$name" \
    >"$work/build_$name.log" 2>&1
}
if [ $ok = 1 ]; then
  link units "${base[@]}" -- || ok=0
  link trace "${base[@]}" "${traces[@]}" -- || ok=0
  link profile "${json[@]}" models/cost/device_profile.cpp generated/builtin_profiles.cpp -- || ok=0
  link measurements "${json[@]}" calibrate/fit/measurements.cpp models/kernels/kernel.cpp -- || ok=0
  link job_traces "${job_traces[@]}" -- -lyaml-cpp -lprotobuf || ok=0
fi
engine=(sim/libcs_engine.a sim/libcs_simgrid.a calibrate/libcs_calibrate.a -Wl,--push-state,--whole-archive
        workloads/libcs_workloads.a policies/libcs_policies.a models/libcs_model_kinds.a traces/libcs_traces.a
        -Wl,--pop-state models/libcs_models.a core/libcs_core.a platform/libcs_platform.a
        models/devices/libcs_devices.a base/libcs_base.a)
scenario_targets=()
if [ $ok = 1 ] && [ -f "$build/sim/libcs_engine.a" ] && [ -f "$build/workloads/libcs_workloads.a" ]; then
  libs=()
  for l in "${engine[@]}"; do case $l in -*) libs+=("$l") ;; *) libs+=("$build/$l") ;; esac; done
  # The engine's libraries are unity builds: an archive member holds several sources, so one pulled in for another
  # symbol also defines the readers compiled here; the instrumented copies come first and win.
  for t in scenario set; do
    link "$t" "${shared[@]}" -- -Wl,--allow-multiple-definition "${libs[@]}" -lsimgrid -lyaml-cpp -lprotobuf &&
      scenario_targets+=("$t") || ok=0
  done
fi
if [ $ok = 0 ]; then
  if cat "$work"/build_*.log | grep -qiE "libclang_rt.fuzzer|cannot find -l|unsupported option"; then
    echo "clang without libFuzzer: skipped"; exit 77
  fi
  cat "$work"/build_*.log; exit 1
fi
targets=(units trace profile measurements job_traces "${scenario_targets[@]}")
for t in "${targets[@]}"; do mkdir -p "$work/seeds/$t" "$work/corpus/$t"; done
cp "$root"/calibrate/profiles/*.json "$work/seeds/profile/"
cp "$root"/calibrate/measurements/*.json "$work/seeds/measurements/"
i=0
for u in 80GiB 400Gb/s 1.5us 25Gbps 0.5 12MB 3h 1e308GiB nan; do printf '%s' "$u" >"$work/seeds/units/$i"; i=$((i + 1)); done
{ printf s; head -c 3000 "$root/traces/samples/swim/FB-2009_samples_24_times_1hr_0.tsv"; } >"$work/seeds/trace/swim"
{ printf r; head -c 5000 "$root/traces/samples/hadoop/gridmix-wordcount-rumen.json"; } >"$work/seeds/trace/rumen"
{ printf j; cat "$root/traces/samples/hadoop/job_1329348432655_0001-sleep-10m-1r.jhist"; } >"$work/seeds/trace/jhist"
{ printf g; head -c 3000 "$root/traces/samples/gpu-jobs/philly-first-3000.csv"; } >"$work/seeds/job_traces/philly"
{ printf g; head -c 3000 "$root/traces/samples/gpu-jobs/openb-pods-first-1500.csv"; } >"$work/seeds/job_traces/openb"
{ printf g; cat "$root/traces/samples/gpu-jobs/60_job.csv"; } >"$work/seeds/job_traces/tiresias"
{ printf m; head -c 3000 "$root/traces/samples/moe/mixtral-routing.csv"; } >"$work/seeds/job_traces/moe"
{ printf e; head -c 20000 "$root/traces/samples/spark/local-1422981780767"; } >"$work/seeds/job_traces/spark"
{ printf k; printf '%s' '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5,
  "dur": 2, "args": {"correlation": 3}}, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1,
  "ts": 1, "dur": 0.2, "args": {"correlation": 3}}], "distributedInfo": {"rank": 0, "world_size": 2}}'; } \
  >"$work/seeds/job_traces/kineto"
{ printf c; cat "$root/traces/samples/chakra/small_chakra.0.json"; } >"$work/seeds/job_traces/chakra-json"
{ printf c; cat "$root/traces/samples/chakra/astra-sim-all_reduce-4npus_1MB/all_reduce.0.et"; } >"$work/seeds/job_traces/chakra-et"
{ printf c; gzip -dc "$root/traces/samples/chakra/chakra.0.et.gz" | head -c 6000; } >"$work/seeds/job_traces/chakra-et-head"
cp "$root"/scenarios/*.yaml "$work/seeds/scenario/" 2>/dev/null || true
printf 'cluster.nodes=4\nworkload.parallel.tp=2' >"$work/seeds/set/a"
printf 'cluster.network.levels[0].oversubscription=2' >"$work/seeds/set/b"
printf 'workload.model={layers: 4, hidden: 512}\nprices.nic_hour=0.5' >"$work/seeds/set/c"
printf 'sworker,step,seconds\n0,0,0.5\n0,1,0.25\n1,0,0.3\n' >"$work/seeds/job_traces/steps"
# container-overflow checks misfire when vectors cross between instrumented and uninstrumented code (the engine).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_container_overflow=0
status=0
for t in "${targets[@]}"; do
  kept="$root/tests/corpus/fuzz-regressions/$t"
  if [ -d "$kept" ] && [ -n "$(ls -A "$kept" 2>/dev/null)" ]; then
    "$work/fuzz_$t" "$kept"/* >"$work/replay_$t.log" 2>&1 || { echo "fuzz_$t: a kept input fails again"; status=1; }
  fi
  "$work/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/" \
    -print_final_stats=1 "$work/corpus/$t" "$work/seeds/$t" >"$work/fuzz_$t.log" 2>&1 || {
    echo "fuzz_$t found an input that fails (in $work):"; grep -E "ERROR|SUMMARY" "$work/fuzz_$t.log" | head -5; status=1
  }
  echo "fuzz_$t: $(grep -E '^stat::number_of_executed_units' "$work/fuzz_$t.log" | awk '{print $2}') inputs in ${seconds} s"
done
exit $status
