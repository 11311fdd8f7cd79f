#!/usr/bin/env bash
# Cross-checks the analytical (flow-level) network backend of the actor workloads against simgrid (issue 16): mean
# JCT per scheduler and seed on a 10-minute FB-2010 window (600 hosts) and on the Hit paper-like scenario, the gap
# between backends, the mean over seeds, and whether both rank the schedulers alike (per seed and by the mean).
# Prints one table per scenario and wall times. About 6 minutes on one core.
# Usage: bench/mapreduce_backends.sh [BUILD_DIR] [SEEDS...]
set -euo pipefail
build=${1:-build}
shift || true
seeds=${*:-1 2 3}
schedulers="capacity fifo pna hit pat"
bin=$(mktemp)
cp "$build/clustersim" "$bin" && chmod +x "$bin" # a rebuild during the run must not pull the binary away
out=$(mktemp -d)
trap 'rm -rf "$out" "$bin"' EXIT
run_one() { # scenario tag, extra args...
  local tag=$1 scenario=$2 backend=$3 sched=$4 seed=$5
  shift 5
  local dir="$out/$tag-$backend-$sched-$seed"
  local start end
  start=$(date +%s.%N)
  "$bin" run "$scenario" --quiet --set backend="$backend" --set policies.mapreduce="$sched" --set seed="$seed" \
    "$@" --out "$dir"
  end=$(date +%s.%N)
  echo "$end - $start" | bc >"$dir/wall"
}
for seed in $seeds; do
  for s in $schedulers; do
    for b in simgrid analytical; do
      run_one fb2010 bench/mapreduce-fb2010-600.yaml "$b" "$s" "$seed" --set workload.mapreduce.trace.duration=10min
      run_one hit scenarios/reference/mapreduce-hit-paper.yaml "$b" "$s" "$seed"
    done
  done
done
python3 - "$out" "$seeds" "$schedulers" <<'PY'
import json, sys
out, seeds, scheds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def get(tag, b, s, seed):
    d = f"{out}/{tag}-{b}-{s}-{seed}"
    return json.load(open(d + "/report.json"))["metrics"]["mean_jct_s"], float(open(d + "/wall").read())
for tag, name in (("fb2010", "FB-2010 10 min, 600 hosts"), ("hit", "Hit paper-like, 80 hosts")):
    print(f"\n{name}: mean JCT (s) simgrid / analytical (gap)")
    print("seed  " + "  ".join(f"{s:>26}" for s in scheds) + "   ranking same")
    gaps, walls = [], {"simgrid": 0.0, "analytical": 0.0}
    same = 0
    for seed in seeds:
        row, sg, an = [], {}, {}
        for s in scheds:
            (a, wa), (b, wb) = get(tag, "simgrid", s, seed), get(tag, "analytical", s, seed)
            sg[s], an[s] = a, b
            walls["simgrid"] += wa
            walls["analytical"] += wb
            gaps.append((b - a) / a)
            row.append(f"{a:8.2f} / {b:8.2f} ({100 * (b - a) / a:+5.1f}%)")
        rank = lambda m: sorted(scheds, key=lambda s: m[s])
        ok = rank(sg) == rank(an)
        same += ok
        print(f"{seed:>4}  " + "  ".join(f"{c:>26}" for c in row) + f"   {'yes' if ok else 'no: ' + ' '.join(rank(sg)) + ' | ' + ' '.join(rank(an))}")
    mean = {b: {s: sum(get(tag, b, s, seed)[0] for seed in seeds) / len(seeds) for s in scheds}
            for b in ("simgrid", "analytical")}
    print("mean over seeds: " + "  ".join(
        f"{s} {mean['simgrid'][s]:.2f} / {mean['analytical'][s]:.2f} "
        f"({100 * (mean['analytical'][s] - mean['simgrid'][s]) / mean['simgrid'][s]:+.1f}%)" for s in scheds))
    order = {b: sorted(scheds, key=lambda s: mean[b][s]) for b in mean}
    print(f"ranking by the mean: simgrid {' < '.join(order['simgrid'])}; analytical {' < '.join(order['analytical'])}"
          f" ({'same' if order['simgrid'] == order['analytical'] else 'different'})")
    mean_abs = sum(abs(g) for g in gaps) / len(gaps)
    print(f"mean |gap| {100 * mean_abs:.1f}%, largest {100 * max(abs(g) for g in gaps):.1f}%; same ranking on {same}/{len(seeds)} seeds;"
          f" wall simgrid {walls['simgrid']:.1f} s, analytical {walls['analytical']:.1f} s")
PY
