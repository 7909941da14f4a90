#!/usr/bin/env bash
# vm test (runs on the host): hack/vm/run.sh's contract, on the minimal topology. The script's
# exit code comes back; output, working directory and environment pass through; a hung guest
# gives 124 within the timeout and leaves no qemu behind; a bad topology is a harness failure
# (125).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run=$here/../../hack/vm/run.sh
minimal=$here/../../hack/vm/topologies/minimal.sh
# shellcheck source=hack/vm/lib.sh
source "$here/../../hack/vm/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
cat >job.sh <<'JOB'
#!/bin/bash
echo "cwd=$PWD arg=$1 env=$RDMANET_CONTRACT extra=$EXTRA"
echo artifact >"$RDMANET_VM_OUT/result.txt"
exit 7
JOB

out=$(RDMANET_CONTRACT=yes EXTRA=no RDMANET_VM_OUT_DIR="$tmp/out" "$run" --topology "$minimal" \
  --env EXTRA=given --timeout 120 bash job.sh 'a b' 2>&1)
rc=$?
echo "$out"
t_eq "exit code passes through" "$rc" 7
t_match "cwd, args and env pass through" "^cwd=$tmp arg=a b env=yes extra=given$" "$out"
t_eq "files in RDMANET_VM_OUT come back" "$(cat "$tmp/out/result.txt" 2>&1)" artifact

start=$SECONDS
out=$("$run" --topology "$minimal" --timeout 10 sleep 600 2>&1)
rc=$?
echo "$out"
t_eq "a hung guest times out with 124" "$rc" 124
t_run "the timeout is enforced promptly ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 30
# qemu inherits run.sh's working directory, which is ours alone.
qemus_here() {
  local p
  for p in $(pgrep -f qemu-system-x86_64); do
    [[ $(readlink "/proc/$p/cwd" 2>/dev/null) == "$tmp" ]] && echo "$p"
  done
}
t_eq "no qemu left behind" "$(qemus_here)" ""

echo 'vm_qemu_args=(-device no-such-device)' >bad.sh
out=$("$run" --topology "$tmp/bad.sh" --timeout 60 true 2>&1)
rc=$?
echo "$out"
t_eq "a qemu that cannot start is a harness failure (125)" "$rc" 125
t_done
