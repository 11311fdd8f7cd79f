#!/usr/bin/env bash
# Large training runs (issue 18 item 6): one Llama-2-70B step on 2,048 H100, analytical backend, with wall time and
# peak RSS per layout (target: each within 4 GB and 60 s); then the frontier dense rows of validation.md §6 as they
# run (Llama 3.1 405B with context parallelism on 1,024 H100). Usage: bench/scale.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
scenario=bench/scenarios/llama2-70b-2048-h100.yaml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
  local label=$1
  shift
  run_scenario "$label" "$scenario" "$@"
}
source "$(dirname "$0")/timed_run.sh"
run "tp8 pp4 dp64 ZeRO-1 1F1B"
run "tp8 pp4 dp64 ZeRO-1 1F1B, every replica" --replicas all
run "tp8 pp1 dp256 ZeRO-3" --set workload.parallel.pp=1 --set workload.parallel.dp=256 --set workload.parallel.zero=3
run "tp4 pp8 dp64 ZeRO-2 interleaved v2" --set workload.parallel.tp=4 --set workload.parallel.pp=8 \
  --set workload.parallel.vpp=2 --set workload.parallel.zero=2 --set policies.pipeline=interleaved-1f1b
run "tp8 pp1 dp256 ZeRO-3, every replica" --set workload.parallel.pp=1 --set workload.parallel.dp=256 \
  --set workload.parallel.zero=3 --replicas all
run_scenario "Llama 3.1 405B tp8 cp2 pp8 v8 dp8, 1,024 GPUs" scenarios/reference/mbridge-llama31-405b-fp8.yaml
run_scenario "GPT-3 175B tp4 pp8 v6 dp16, 512 GPUs" scenarios/reference/nemo-gpt3-175b-512-fp8.yaml
# Issue 41's 100,000-GPU target (<= 5 s, <= 2 GiB): Llama 3 405B on 98,304 H100 behind pods joined 7:1, replica 0
# folded in with its copies' share of the oversubscribed links; then its pipeline across the pods, where the 7:1 is
# felt; then every replica simulated, for the fold's speed-up.
s98=bench/scenarios/llama3-405b-98304-h100.yaml
run_scenario "Llama 3 405B tp8 pp16 v8 dp768, 98,304 GPUs, 7:1 pods, folded" $s98
run_scenario "the same, pipeline across the pods (tp-dp-pp), folded" $s98 --set workload.parallel.placement=tp-dp-pp
run_scenario "the same as the first, every replica" $s98 --replicas all
