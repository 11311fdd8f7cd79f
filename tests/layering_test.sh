#!/usr/bin/env bash
# Layering and size rules, checked over the source tree (run by ctest):
#  - an #include may point only to the same layer or one it is allowed to use (the matrix below);
#  - workload kinds do not include each other (a kind is one folder);
#  - SimGrid's headers appear only in the engine files that talk to SimGrid;
#  - lines fit in 120 columns (.clang-format);
#  - in sim/, models/, policies/ (and the other library folders): no file over 500 lines, no function over 80.
# Each rule is one grep or awk pass over every file (a process per file made this test take half a minute).
set -u # no pipefail: a grep that selects nothing is a pass; each pipeline's awk decides
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
fail=0

mapfile -t sources < <(find base core platform models traces policies workloads calibrate sim -name '*.cpp' \
                         -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' | sort)

# Includes: "file:line:#include "path"" lines, one awk for the matrix and the workload-kind rule.
grep -Hn '^#include "' "${sources[@]}" | awk -F: '
  function layer(p) {
    if (p ~ /^base\//) return "base"; if (p ~ /^models\/devices\//) return "devices"
    if (p ~ /^platform\//) return "platform"; if (p ~ /^core\//) return "core"; if (p ~ /^models\//) return "models"
    if (p ~ /^traces\//) return "traces"; if (p ~ /^policies\//) return "policies"
    if (p ~ /^workloads\//) return "workloads"; if (p ~ /^calibrate\//) return "calibrate"
    if (p ~ /^sim\//) return "sim"; return "other"
  }
  BEGIN {
    may["base"] = "base"; may["devices"] = "base devices"; may["platform"] = "base devices platform"
    may["core"] = "base devices platform core"; may["models"] = "base devices platform core models"
    may["traces"] = "base traces"; may["policies"] = "base devices platform core models traces policies"
    may["workloads"] = may["policies"] " workloads"; may["calibrate"] = "base devices platform core models calibrate"
    may["sim"] = "base devices platform core models traces policies workloads calibrate sim"
  }
  {
    f = $1; line = $2; inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
    from = layer(f); to = layer(inc)
    if (to == "other") next
    if (index(" " may[from] " ", " " to " ") == 0) {
      printf "%s:%s: includes %s: layer '\''%s'\'' may not use layer '\''%s'\''\n", f, line, inc, from, to; bad = 1
    }
    if (from == "workloads" && to == "workloads") {
      split(f, a, "/"); split(inc, b, "/")
      if (a[2] != b[2]) {
        printf "%s:%s: includes %s: workload kind '\''%s'\'' may not use kind '\''%s'\''\n", f, line, inc, a[2], b[2]
        bad = 1
      }
    }
  }
  END { exit bad }' || fail=1

# SimGrid's headers: only the engine files that talk to SimGrid.
grep -Hn '^#include <simgrid' "${sources[@]}" | grep -vE '^(sim/platform/simgrid_platform\.cpp|sim/exec/simgrid_executor\.cpp|sim/runtime/[^/:]*\.cpp|sim/runtime/simgrid_actors\.hpp):' |
  awk -F: '{ printf "%s:%s: only the SimGrid-facing engine files may include SimGrid\n", $1, $2; bad = 1 } END { exit bad }' ||
  fail=1

mapfile -t others < <(find tests bench -name '*.cpp' -o -name '*.hpp' | sort)
awk 'length($0) > 120 { printf "%s:%d: line of %d columns (limit 120)\n", FILENAME, FNR, length($0); bad = 1 }
     END { exit bad }' "${sources[@]}" "${others[@]}" || fail=1

# Size rules for the library folders (traces/ and calibrate/ are not held to them yet). Function bodies open with a
# lone "{" and close with "}" at the same indentation; a lone "{" after a class, struct, enum or namespace head (the
# house style breaks before those braces too) opens no function.
mapfile -t sized < <(printf '%s\n' "${sources[@]}" | grep -v '^traces/\|^calibrate/')
awk '
  FNR == 1 { if (NR > 1) check_length(); delete start; prev = "" }
  function check_length() { if (last_fnr > 500) { printf "%s: %d lines (limit 500)\n", last_file, last_fnr; bad = 1 } }
  { last_file = FILENAME; last_fnr = FNR }
  /^[ \t]*\{[ \t]*$/ { match($0, /^[ \t]*/); d = RLENGTH
                       head = prev ~ /^[ \t]*(template[^(]*)?(class|struct|union|enum|namespace)([ \t]|$)/ ||
                              prev ~ /^[ \t]*[:,][ \t]*(public|private|protected)[ \t]/
                       start[d] = head ? -1 : FNR; prev = $0; next }
  /^[ \t]*\}/ { match($0, /^[ \t]*/); d = RLENGTH
                if ((d in start) && start[d] > 0) { n = FNR - start[d] - 1
                  if (n > 80) { printf "%s:%d: function of %d lines (limit 80)\n", FILENAME, start[d], n; bad = 1 } }
                delete start[d] }
  /[^ \t]/ { prev = $0 }
  END { check_length(); exit bad }' "${sized[@]}" || fail=1
exit $fail
