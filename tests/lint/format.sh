#!/usr/bin/env bash
# lint: every tracked C++ file is clang-formatted (.clang-format at the root). Names each file
# that is not; `clang-format -i FILE` fixes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cc' '*.h' | while read -r f; do
  [[ -f $f ]] && echo "$f"
done)
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'not clang-formatted (run clang-format -i):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format: ${#files[@]} files clean"
