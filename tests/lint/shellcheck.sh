#!/usr/bin/env bash
# lint: shellcheck on every shell script of hack/, bench/ and tests/ (by extension or shebang),
# following sourced files (-x).
set -euo pipefail
cd "$(dirname "$0")/../.."
mapfile -t files < <(git ls-files -co --exclude-standard -- hack bench tests | while read -r f; do
  [[ -f $f ]] || continue
  case $f in
    *.sh) echo "$f" ;;
    *.*) ;;
    *) head -n 1 "$f" | grep -qE '^#!.*\b(ba)?sh\b' && echo "$f" ;;
  esac
done)
shellcheck -x -P SCRIPTDIR "${files[@]}"
echo "shellcheck: ${#files[@]} scripts clean"
