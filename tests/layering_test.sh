#!/usr/bin/env bash
# Layering and size rules, checked over the source tree (run by ctest):
#  - an #include may point only to the same layer or one it is allowed to use (the matrix below);
#  - workload kinds do not include each other (a kind is one folder);
#  - SimGrid's headers appear only in the engine files that talk to SimGrid;
#  - lines fit in 120 columns (.clang-format);
#  - in sim/, models/, policies/ (and the other library folders): no file over 500 lines, no function over 80.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
fail=0
report() { echo "$1"; fail=1; }

layer_of() { # the layer a path belongs to
  case $1 in
    base/*) echo base ;; models/devices/*) echo devices ;; platform/*) echo platform ;; core/*) echo core ;;
    models/*) echo models ;; traces/*) echo traces ;; policies/*) echo policies ;; workloads/*) echo workloads ;;
    calibrate/*) echo calibrate ;; sim/*) echo sim ;; *) echo other ;;
  esac
}
allowed() { # the layers a layer may include
  case $1 in
    base) echo "base" ;;
    devices) echo "base devices" ;;
    platform) echo "base devices platform" ;;
    core) echo "base devices platform core" ;;
    models) echo "base devices platform core models" ;;
    traces) echo "base traces" ;;
    policies) echo "base devices platform core models traces policies" ;;
    workloads) echo "base devices platform core models traces policies workloads" ;;
    calibrate) echo "base devices platform core models calibrate" ;;
    sim) echo "base devices platform core models traces policies workloads calibrate sim" ;;
  esac
}

sources=$(find base core platform models traces policies workloads calibrate sim -name '*.cpp' -o -name '*.hpp' \
            -o -name '*.cu' -o -name '*.cuh' | sort)
for f in $sources; do
  from=$(layer_of "$f")
  ok=" $(allowed "$from") "
  while IFS=: read -r line inc; do
    to=$(layer_of "$inc")
    [ "$to" = other ] && continue
    case "$ok" in *" $to "*) ;; *) report "$f:$line: includes $inc: layer '$from' may not use layer '$to'" ;; esac
    if [ "$from" = workloads ] && [ "$to" = workloads ]; then
      kind=$(echo "$f" | cut -d/ -f2); other=$(echo "$inc" | cut -d/ -f2)
      [ "$kind" = "$other" ] || report "$f:$line: includes $inc: workload kind '$kind' may not use kind '$other'"
    fi
  done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
  case $f in
    sim/platform/simgrid_platform.cpp | sim/exec/simgrid_executor.cpp | sim/runtime/*.cpp | sim/runtime/simgrid_actors.hpp) ;;
    *) grep -n '^#include <simgrid' "$f" | while IFS=: read -r line _; do
         echo "$f:$line: only the SimGrid-facing engine files may include SimGrid"; done | grep . && fail=1 ;;
  esac
done

for f in $sources $(find tests bench -name '*.cpp' -o -name '*.hpp' | sort); do
  awk -v f="$f" 'length($0) > 120 { printf "%s:%d: line of %d columns (limit 120)\n", f, FNR, length($0); bad = 1 }
                 END { exit bad }' "$f" || fail=1
done

# Size rules for the library folders (traces/ and calibrate/ are not held to them yet).
for f in $(echo "$sources" | grep -v '^traces/\|^calibrate/'); do
  lines=$(wc -l < "$f")
  [ "$lines" -le 500 ] || report "$f: $lines lines (limit 500)"
  # Function bodies open with a lone "{" and close with "}" at the same indentation; a lone "{" after a class,
  # struct, enum or namespace head (the house style breaks before those braces too) opens no function.
  awk -v f="$f" '
    /^[ \t]*\{[ \t]*$/ { match($0, /^[ \t]*/); d = RLENGTH
                         head = prev ~ /^[ \t]*(template[^(]*)?(class|struct|union|enum|namespace)([ \t]|$)/ ||
                                prev ~ /^[ \t]*[:,][ \t]*(public|private|protected)[ \t]/
                         start[d] = head ? -1 : FNR; prev = $0; next }
    /^[ \t]*\}/ { match($0, /^[ \t]*/); d = RLENGTH
                  if ((d in start) && start[d] > 0) { n = FNR - start[d] - 1
                    if (n > 80) { printf "%s:%d: function of %d lines (limit 80)\n", f, start[d], n; bad = 1 } }
                  delete start[d] }
    /[^ \t]/ { prev = $0 }
    END { exit bad }' "$f" || fail=1
done
exit $fail
