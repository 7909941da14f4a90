#!/usr/bin/env bash
# lint: clang-tidy's bugprone and performance checks on the project's own translation units
# (cni/, common/, deviceplugin/; generated protobuf code and tests are left out), with the
# build's compile_commands.json. Any finding fails. Every build type passes alike: flags that only
# GCC knows (Release adds -Wno-restrict and -Wno-stringop-overflow, CMakeLists.txt says why) are
# not findings of clang's.
#
#   tidy.sh BUILD_DIR [FILE...]    FILEs (repo-relative): only those; default every project TU
set -euo pipefail
build=${1:?build dir with compile_commands.json}
shift
build=$(realpath "$build")
cd "$(dirname "$0")/../.."
[[ -f $build/compile_commands.json ]] || {
  echo "tidy: no $build/compile_commands.json" >&2
  exit 1
}
# clang-tidy 22 (Debian's clang-tidy-22): unlike Debian's default 14 it does not match its checks
# inside system headers, which were three quarters of the time (gRPC, protobuf, JSON, fmt): the
# whole tree takes a third as long (measured: one TU 16.7 s against 4.2 s).
tidy=${CLANG_TIDY:-clang-tidy-22}
command -v "$tidy" >/dev/null || {
  echo "tidy: $tidy is missing (hack/install-deps.sh installs it)" >&2
  exit 1
}
# Left out, as noise for this code base:
#   bugprone-easily-swappable-parameters flags every (int, int) signature;
#   bugprone-narrowing-conversions is -Wall's business;
#   bugprone-invalid-enum-default-initialization flags every value-initialized libibverbs struct
#     (ibv_qp_attr a{}: the C API's own idiom, its enums have no zero member);
#   performance-enum-size asks for uint8_t enums;
#   performance-avoid-endl: the probe's log lines are flushed on purpose (tests and pods read
#     them while it runs).
# -Wno-deprecated-declarations: libstdc++ 12's std::stable_sort calls get_temporary_buffer, which
# clang 22 reports deprecated from inside the system header (GCC, which builds the code, does
# not; it still reports the project's own uses).
# bugprone-unchecked-optional-access (new since 14) is off for now: it names 30 places, most
# behind a check it cannot follow (a validated option read again); each needs reading.
checks='-*,bugprone-*,performance-*,-bugprone-easily-swappable-parameters'
checks+=',-bugprone-narrowing-conversions,-bugprone-invalid-enum-default-initialization'
checks+=',-performance-enum-size,-performance-avoid-endl,-bugprone-unchecked-optional-access'
if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- 'cni/*.cc' 'common/*.cc' 'deviceplugin/*.cc' |
    grep -v '^cni/fmt_symbols.cc$')
fi
# A file the build does not compile would be checked with guessed flags: say so instead.
missing=0
for f in "${files[@]}"; do
  grep -q "\"file\": \"$(pwd)/$f\"" "$build/compile_commands.json" || {
    echo "tidy: $f is not in $build/compile_commands.json" >&2
    missing=1
  }
done
((missing == 0)) || exit 1
start=$SECONDS
# Two at a time (the machine has two cores); each file is independent, and one file per
# clang-tidy keeps both busy to the end.
if ! printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet --checks="$checks" \
    --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-deprecated-declarations \
    --warnings-as-errors='*' --header-filter="^$(pwd)/(cni|common|deviceplugin)/" \
    >"$build/tidy.log" 2>&1; then
  grep -E 'warning:|error:' "$build/tidy.log" | sort -u >&2
  echo "tidy: $(grep -E 'warning:|error:' "$build/tidy.log" | sort -u | wc -l) findings above" \
    "(full log: $build/tidy.log)" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files clean in $((SECONDS - start)) s"
