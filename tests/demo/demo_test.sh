#!/usr/bin/env bash
# The demo as a test: `hack/demo.sh --quiet` must exit 0 and print the summary table with every
# step PASS (or N/A, with its reason, where the path cannot show it: on the simulated node).
#
#   demo_test.sh REPO BUILD_DIR
set -u
repo=${1:?repo} build=${2:?build dir}
out=$(BUILD_DIR=$build "$repo/hack/demo.sh" --quiet 2>&1)
rc=$?
printf '%s\n' "$out"
fail=0
no() {
  echo "demo_test: FAIL: $*"
  fail=1
}
((rc == 0)) || no "hack/demo.sh --quiet exited $rc"
grep -qE '^rdmanet demo summary: (vm|simnode)' <<<"$out" || no "no summary header"
grep -qE '^  STEP +RESULT +DETAIL' <<<"$out" || no "no table header"
for step in build node doctor device-plugin pod-a pod-b ping-jumbo pcp-capture vf-settings rdma-traffic \
  health-down health-up vf-restore; do
  grep -qE "^  $step +(PASS|N/A) " <<<"$out" || no "step $step is not PASS or N/A"
done
# On the VM every step can be shown: nothing may be N/A there.
if grep -qE '^rdmanet demo summary: vm' <<<"$out" && grep -qE '^  [a-z-]+ +N/A ' <<<"$out"; then
  no "a step is N/A on the VM path"
fi
grep -q '^demo: every step checked out' <<<"$out" || no "no final verdict"
# --quiet prints only the summary: no story sections.
grep -q '^====' <<<"$out" && no "--quiet printed the story"
((fail == 0)) && echo "demo_test: PASS"
exit "$fail"
