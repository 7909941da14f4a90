#!/usr/bin/env bash
# Writes manifests/examples/preflight/run.sh into the ConfigMap of manifests/examples/preflight.yaml
# (data."run.sh", verbatim, indented), so the example stays one self-contained `kubectl apply`
# while the script is a real file that tests run (tests/vm/preflight.sh).
#
#   hack/gen-preflight.sh [YAML]     (default: the example, rewritten in place)
# tests/manifests/preflight_sync.sh fails when the two disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
yaml=${1:-manifests/examples/preflight.yaml}
script=manifests/examples/preflight/run.sh
awk -v script="$script" '
  /^  run\.sh: \|$/ { print; while ((getline l < script) > 0) print (l == "" ? "" : "    " l); skip = 1; next }
  skip && /^---$/ { skip = 0 }
  !skip { print }
' "$yaml" >"$yaml.tmp"
mv "$yaml.tmp" "$yaml"
