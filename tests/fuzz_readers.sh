#!/usr/bin/env bash
# CI fuzz smoke (ctest Fuzz.InputReadersSmoke): runs fuzz_smoke (every libFuzzer target of fuzz/, built by the
# ordinary compiler: fuzz/smoke_driver.cpp) for each target on the kept regressions (tests/corpus/fuzz-regressions),
# seeds made of the bundled files, and MUTATIONS seeded mutations of each seed. A crash, abort, uncaught exception
# or hang fails. `make fuzz` is the instrumented, coverage-guided run.
# Usage: tests/fuzz_readers.sh FUZZ_SMOKE WORK_DIR MUTATIONS
set -uo pipefail
smoke=${1:?usage: fuzz_readers.sh FUZZ_SMOKE WORK_DIR MUTATIONS}
work=${2:?usage: fuzz_readers.sh FUZZ_SMOKE WORK_DIR MUTATIONS}
mutations=${3:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work/seeds"
mkdir -p "$work"
targets=(units trace profile measurements job_traces scenario set import)
for t in "${targets[@]}"; do mkdir -p "$work/seeds/$t"; done
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
{ printf m; cat "$root/tests/data/import/mbridge-llama3-70b-fp8.args"; } >"$work/seeds/import/megatron"
{ printf m; cat "$root/tests/data/import/mbridge-llama3-70b-fp8.overrides"; } >"$work/seeds/import/bridge"
{ printf t; cat "$root/tests/data/import/torchtitan-llama3-8b.toml"; } >"$work/seeds/import/torchtitan"
{ printf m; cat "$root/tests/data/import/mbridge-gpt-oss-120b.args"; } >"$work/seeds/import/gpt-oss"
printf 'ltorchrun --nnodes 4 --nproc_per_node 8 train.py --job.config-file a/llama3_8b.toml --training.compile \\\n  --model.converters="float8" --training.local_batch_size=2 --parallelism.tensor_parallel_degree 2\n' \
  >"$work/seeds/import/torchtitan-launch"
for f in "$root"/tests/data/import/hf/*.config.json; do
  { printf h; cat "$f"; } >"$work/seeds/import/hf-$(basename "$f" .config.json)"
done
printf 't[model]\nname = "qwen3"\nflavor = "30B-A3B"\n[training]\nlocal_batch_size = 1\n[parallelism]\ntensor_parallel_degree = 2\nexpert_parallel_degree = 8\nexpert_tensor_parallel_degree = 1\nexpert_parallel_comm_backend = "deepep"\n' \
  >"$work/seeds/import/torchtitan-moe"
status=0
for t in "${targets[@]}"; do
  kept="$root/tests/corpus/fuzz-regressions/$t"
  if [ -d "$kept" ] && [ -n "$(ls -A "$kept")" ]; then
    "$smoke" "$t" 0 "$kept" >"$work/replay_$t.log" 2>&1 || {
      echo "fuzz_smoke $t: a kept input fails again"; tail -3 "$work/replay_$t.log"; status=1; }
  fi
  "$smoke" "$t" "$mutations" "$work/seeds/$t" 2>"$work/fuzz_$t.log" || {
    echo "fuzz_smoke $t found an input that fails:"; tail -3 "$work/fuzz_$t.log"; status=1; }
done
exit $status
