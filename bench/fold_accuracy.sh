#!/usr/bin/env bash
# How far the MoE fold behind oversubscribed pods lands from simgrid with every replica (docs/scale.md, "Where the MoE
# fold still misses"): variants of tests/data/oversubscribed-moe-fold.yaml with 4 layers and 8 microbatches a replica,
# pp 2 over dp 64 (1F1B and DualPipeV, both placements) and pp 1 over dp 128, behind 4:1 and 2:1 pods. Prints both
# step times, the error and the mean |error| of the pipelined rows. Each simgrid run takes 20-45 s on 2 cores.
# With --more it then runs the 4-microbatch variants docs/scale.md lists beside them (DualPipeV under tp-dp-pp at both
# oversubscriptions, Zipf routing, interleaved 1F1B, DualPipeV under tp-pp-dp at 4:1, 1F1B at 3:1; 3 minutes more).
# Usage: bench/fold_accuracy.sh [BUILD_DIR] [--more]
set -euo pipefail
build=${1:-build}
more=${2:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
step_ms() { # label, then clustersim run arguments: the step in ms
  local label=$1
  shift
  "$build/clustersim" run tests/data/oversubscribed-moe-fold.yaml --quiet --out "$out/$label" "$@"
  python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['metrics']['iteration_time_s'] * 1e3)" \
    "$out/$label/report.json"
}
printf '%-34s %10s %10s %8s\n' variant simgrid_ms fold_ms error
errors=()
for over in 4 2; do
  for variant in "1f1b tp-pp-dp 2" "1f1b tp-dp-pp 2" "dualpipev tp-pp-dp 2" "dualpipev tp-dp-pp 2" "1f1b tp-pp-dp 1"; do
    read -r schedule placement pp <<<"$variant"
    args=(--set workload.model.layers=4 --set "workload.parallel.pp=$pp" --set "workload.parallel.dp=$((128 / pp))"
      --set workload.batch.global=512 --set "policies.pipeline=$schedule"
      --set "workload.parallel.placement=$placement" --set "cluster.network.levels[1].oversubscription=$over")
    label="$schedule-$placement-pp$pp-$over"
    fair=$(step_ms "$label-simgrid" "${args[@]}" --backend simgrid --replicas all)
    folded=$(step_ms "$label-fold" "${args[@]}")
    error=$(python3 -c "import sys; print(f'{(float(sys.argv[2]) / float(sys.argv[1]) - 1) * 100:+.1f}')" "$fair" \
      "$folded")
    [ "$pp" = 2 ] && errors+=("$error")
    printf '%-34s %10.2f %10.2f %7s%%\n' "$schedule $placement pp $pp, $over:1" "$fair" "$folded" "$error"
  done
done
python3 -c "import sys; e = [abs(float(x)) for x in sys.argv[1:]]; print(f'pp 2 rows: mean |error| {sum(e) / len(e):.1f}%, max {max(e):.1f}%')" \
  "${errors[@]}"
[ "$more" = --more ] || exit 0
small=(--set workload.model.layers=4 --set workload.parallel.pp=2 --set workload.parallel.dp=64
  --set workload.batch.global=256)
extra() { # label, then the variant's arguments
  local label=$1
  shift
  fair=$(step_ms "extra-$label-simgrid" "${small[@]}" "$@" --backend simgrid --replicas all)
  folded=$(step_ms "extra-$label-fold" "${small[@]}" "$@")
  python3 -c "import sys; print(f'{sys.argv[1]:<34} {float(sys.argv[2]):10.2f} {float(sys.argv[3]):10.2f} \
{(float(sys.argv[3]) / float(sys.argv[2]) - 1) * 100:+7.1f}%')" "$label" "$fair" "$folded"
}
echo "4 microbatches a replica:"
for over in 4 2; do
  extra "dualpipev tp-dp-pp, $over:1" --set policies.pipeline=dualpipev --set workload.parallel.placement=tp-dp-pp \
    --set "cluster.network.levels[1].oversubscription=$over"
done
extra "1f1b zipf tp-pp-dp, 2:1" --set policies.pipeline=1f1b --set policies.moe_routing=zipf \
  --set "cluster.network.levels[1].oversubscription=2"
extra "interleaved v2 tp-pp-dp, 2:1" --set policies.pipeline=interleaved-1f1b --set workload.parallel.vpp=2 \
  --set "cluster.network.levels[1].oversubscription=2"
extra "dualpipev tp-pp-dp, 4:1" --set policies.pipeline=dualpipev --set "cluster.network.levels[1].oversubscription=4"
extra "1f1b tp-dp-pp, 3:1" --set policies.pipeline=1f1b --set workload.parallel.placement=tp-dp-pp \
  --set "cluster.network.levels[1].oversubscription=3"
