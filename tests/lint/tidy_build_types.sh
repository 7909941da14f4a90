#!/usr/bin/env bash
# lint: tidy.sh passes whatever the build type's flags. A Release build with GCC 12 compiles
# with -Wno-restrict and -Wno-stringop-overflow (CMakeLists.txt), which clang does not know: one
# translation unit, compiled with exactly those flags added, must come out clean.
#
#   tidy_build_types.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?build dir with compile_commands.json}")
cd "$(dirname "$0")/../.."
file=common/base/mac_address.cc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jq --arg f "$(pwd)/$file" \
  '[.[] | select(.file == $f) | .command += " -Wno-restrict -Wno-stringop-overflow"]' \
  "$build/compile_commands.json" >"$tmp/compile_commands.json"
[[ $(jq length "$tmp/compile_commands.json") == 1 ]] || {
  echo "tidy_build_types: $file is not in $build/compile_commands.json" >&2
  exit 1
}
tests/lint/tidy.sh "$tmp" "$file"
