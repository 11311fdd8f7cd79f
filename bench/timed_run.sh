# Sourced by the bench scripts: run_scenario LABEL FILE [ARGS...] runs one scenario under /usr/bin/time and prints
# its task count, simulated step, tokens/s, wall time and peak RSS on one line. Needs $build and $out set.
run_scenario() {
  local label=$1 file=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$out/time" "$build/clustersim" run "$file" --quiet --out "$out/run" "$@" || {
    echo "$label: failed (exit $?)"
    return
  }
  read -r wall rss <"$out/time"
  python3 - "$label" "$wall" "$rss" "$out/run/report.json" <<'PY'
import json, sys
label, wall, rss, report = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), json.load(open(sys.argv[4]))
m = report["metrics"]
print(f"{label:<48} {int(m['task_count']):>9} tasks  step {m['iteration_time_s']:.3f} s  "
      f"{m['tokens_per_s']:,.0f} tokens/s in all  wall {wall:6.2f} s  peak RSS {rss / 1024 / 1024:.2f} GiB")
PY
}
