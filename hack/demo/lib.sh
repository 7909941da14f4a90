# shellcheck shell=bash
# Helpers of the demo's story (hack/demo/story.sh): sections, trimmed command output, the result
# of each step; kubelet.sh drives the stand-in kubelet. Plain shell: the demo runs the product's
# binaries and shows what they did; it has no logic of its own.
#
# Expects: DEMO_WORK (a scratch directory), DEMO_RESULTS (file of "key<TAB>status<TAB>detail"),
# and, for record_platform_step, the platform's PLAT_NA (why a step cannot be shown there).

# shellcheck source=hack/demo/kubelet.sh
source "$(dirname "${BASH_SOURCE[0]}")/kubelet.sh"

# demo_pools_json SELECTOR: the device plugin config of the story, one VF pool with the lossless
# priority and a pod info directory, whose selector (a JSON object) is the platform's
# (plat_pools_json).
demo_pools_json() {
  cat <<EOF
{
  "resourceList": [
    {
      "resourceName": "vf",
      "mode": "vf",
      "preferredAllocation": "gpu-near",
      "lossless": {"priority": 3, "dscp": 26},
      "podInfoDir": "$DEMO_WORK/pod-info",
      "selectors": [$1]
    }
  ]
}
EOF
}

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
# record_platform_step KEY RC PASS_DETAIL FAIL_DETAIL: records a platform step's exit code (plat_*
# functions return 0 for done, 2 for "this platform cannot show it", anything else for failed).
record_platform_step() {
  case $2 in
    0) record "$1" PASS "$3" ;;
    2) record "$1" N/A "$PLAT_NA" ;;
    *) record "$1" FAIL "$4" ;;
  esac
}
# check KEY DETAIL CMD...: records PASS when CMD succeeds, else FAIL.
check() {
  local key=$1 detail=$2
  shift 2
  if "$@"; then record "$key" PASS "$detail"; else record "$key" FAIL "$detail"; fi
}
