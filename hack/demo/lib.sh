# shellcheck shell=bash
# Helpers of the demo's story (hack/demo/story.sh): sections, trimmed command output, the result
# of each step; kubelet.sh drives the stand-in kubelet. Plain shell: the demo runs the product's
# binaries and shows what they did; it has no logic of its own.
#
# Expects: DEMO_WORK (a scratch directory), DEMO_RESULTS (file of "key<TAB>status<TAB>detail").

# shellcheck source=hack/demo/kubelet.sh
source "$(dirname "${BASH_SOURCE[0]}")/kubelet.sh"

# --- output ---------------------------------------------------------------------------------------
# section TITLE: starts one step of the story (with the seconds since the story began).
section() { printf '\n==== %s   [%d s]\n' "$*" "$SECONDS"; }
# say TEXT: a line of narration.
say() { printf -- '-- %s\n' "$*"; }
# run_show [-n LINES] CMD...: prints "$ CMD", runs it, prints its output (the first LINES lines,
# with a note of what was cut); returns CMD's exit code. The full output is in $DEMO_OUT.
run_show() {
  local max=40
  if [[ $1 == -n ]]; then
    max=$2
    shift 2
  fi
  printf '$ %s\n' "$*"
  local rc=0
  DEMO_OUT=$("$@" 2>&1) || rc=$?
  local total
  total=$(printf '%s\n' "$DEMO_OUT" | wc -l)
  printf '%s\n' "$DEMO_OUT" | head -n "$max" | sed 's/^/  /'
  ((total > max)) && printf '  ... (%d more lines)\n' $((total - max))
  ((rc == 0)) || printf '  (exit code %d)\n' "$rc"
  return "$rc"
}

# --- results --------------------------------------------------------------------------------------
# record KEY PASS|FAIL|N/A DETAIL: the outcome of one step, for the summary table.
record() {
  printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$DEMO_RESULTS"
  printf '>> %s: %s%s\n' "$1" "$2" "${3:+ ($3)}"
}
# check KEY DETAIL CMD...: records PASS when CMD succeeds, else FAIL.
check() {
  local key=$1 detail=$2
  shift 2
  if "$@"; then record "$key" PASS "$detail"; else record "$key" FAIL "$detail"; fi
}
