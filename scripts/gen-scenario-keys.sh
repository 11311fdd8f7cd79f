#!/usr/bin/env bash
# Regenerates the "Every key" table of docs/scenarios.md from `clustersim validate --keys --markdown`.
set -euo pipefail
bin=${1:-build/clustersim}
doc=docs/scenarios.md
head=$(sed '/^| key | type | default | meaning |$/,$d' "$doc")
{ printf '%s\n' "$head"; echo '| key | type | default | meaning |'; echo '|---|---|---|---|'; "$bin" validate --keys --markdown; } > "$doc.tmp"
mv "$doc.tmp" "$doc"
