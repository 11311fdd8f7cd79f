#!/usr/bin/env bash
# Spark: the speed target (issue 16: 100 HiBench-like applications on 100 hosts in <= 30 s per policy) on both
# backends with wall time and peak RSS, then the validation rows of docs/spark.md (iMlayer-style cache and iSpark-style provisioning,
# seeds 1-3) and the event-log replays.
# Usage: bench/spark.sh [BUILD_DIR] [--speed-only]
set -euo pipefail
build=${1:-build}
mode=${2:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
metric() { python3 -c "import json,sys; print(json.load(open('$1'))['metrics']['$2'])"; }
first_jct() { sed -n 2p "$1" | cut -d, -f5; }

echo "== speed: bench/spark-100.yaml (100 applications, 100 hosts)"
printf '%-10s %-9s %-8s %7s %9s %8s %12s %8s\n' backend cache provision wall_s peak_MiB tasks mean_jct_s util
for combo in "simgrid vanilla static" "analytical vanilla static" "simgrid imlayer static" \
  "analytical imlayer static" "simgrid vanilla ispark" "analytical vanilla ispark"; do
  set -- $combo
  /usr/bin/time -f '%e %M' -o "$out/time" "$build/clustersim" run bench/spark-100.yaml --quiet --backend "$1" \
    --set policies.spark_cache="$2" --set policies.spark_provisioning="$3" --out "$out/run"
  read -r wall rss < "$out/time"
  printf '%-10s %-9s %-8s %7.1f %9.0f %8.0f %12.1f %8.3f\n' "$1" "$2" "$3" "$wall" "$((rss / 1024))" \
    "$(metric "$out/run/report.json" tasks)" "$(metric "$out/run/report.json" mean_jct_s)" \
    "$(metric "$out/run/report.json" cluster_utilization)"
done
[ "$mode" = --speed-only ] && exit 0

echo "== iMlayer-style shared cache vs per-executor caches (hit-rate points; runtime of the iterative application)"
for app in kmeans pagerank lr; do
  for seed in 1 2 3; do
    for c in vanilla imlayer; do
      "$build/clustersim" run "scenarios/reference/spark-imlayer-$app.yaml" --quiet --seed "$seed" \
        --set policies.spark_cache="$c" --out "$out/$c"
    done
    python3 - "$out" "$app" "$seed" <<'PY'
import json, sys
d, app, seed = sys.argv[1:]
hit = {c: json.load(open(f"{d}/{c}/report.json"))["metrics"]["cache_hit_rate"] for c in ("vanilla", "imlayer")}
jct = {c: float(open(f"{d}/{c}/apps.csv").read().splitlines()[1].split(",")[4]) for c in ("vanilla", "imlayer")}
print(f"{app:<9} seed {seed}  hit {100*hit['vanilla']:5.1f}% -> {100*hit['imlayer']:5.1f}% "
      f"({100*(hit['imlayer']-hit['vanilla']):+5.1f} points)  runtime {jct['vanilla']:7.1f} -> {jct['imlayer']:7.1f} s "
      f"({100*(jct['imlayer']/jct['vanilla']-1):+5.1f}%)")
PY
  done
done

echo "== iSpark-style provisioning vs static peak allocation (scenarios/reference/spark-ispark.yaml)"
for seed in 1 2 3; do
  for p in static ispark; do
    "$build/clustersim" run scenarios/reference/spark-ispark.yaml --quiet --seed "$seed" \
      --set policies.spark_provisioning="$p" --out "$out/$p"
  done
  python3 - "$out" "$seed" <<'PY'
import json, sys
d, seed = sys.argv[1:]
m = {p: json.load(open(f"{d}/{p}/report.json"))["metrics"] for p in ("static", "ispark")}
s, i = m["static"], m["ispark"]
print(f"seed {seed}  mean JCT {s['mean_jct_s']:6.1f} -> {i['mean_jct_s']:6.1f} s ({100*(i['mean_jct_s']/s['mean_jct_s']-1):+5.1f}%)"
      f"  cluster utilisation {100*s['cluster_utilization']:4.1f}% -> {100*i['cluster_utilization']:4.1f}%"
      f"  executors busy {100*s['executor_utilization']:4.1f}% -> {100*i['executor_utilization']:4.1f}%"
      f" ({100*(i['executor_utilization']/s['executor_utilization']-1):+5.1f}%)")
PY
done

echo "== event-log replays: simulated / recorded stage durations"
for s in local yarn; do
  "$build/clustersim" run "scenarios/reference/spark-replay-$s.yaml" --quiet --out "$out/$s"
  echo "$s: $(tail -n +2 "$out/$s/stages.csv" | cut -d, -f7 | tr '\n' ' ')"
done
echo "(recorded: local 0.966 0.123; yarn 16.616 14.811 34.017)"
