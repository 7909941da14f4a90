#!/usr/bin/env bash
# vm test (runs on the host): hack/vm/run.sh's contract, on the minimal topology. The script's
# exit code comes back; output, working directory and environment pass through; a failure
# prints the serial console and RDMANET_VM_OUT_DIR gets its log; a hung guest gives 124 within
# the timeout and leaves no qemu behind; a boot that hangs before the guest's init is reported
# with its console's tail and booted once more, and so are a guest that stops after it and a QEMU
# that crashes; a bad topology is a harness failure (125).
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
t_match "a failure prints the serial console up to the guest's init" "^vm: console: " "$out"
t_run "the whole console log comes back, kernel boot included" \
  grep -q -e "Linux version" -e "^rdmanet-vm: init" "$tmp/out/console.log"
t_eq "the boot's kernel messages are not in the job's output" \
  "$(grep -c "Linux version" <<<"$out")" 0

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

# The harness's hung boot, forced (RDMANET_VM_HANG_BOOTS: no init, and the kernel stays in its
# panic): the first boot is given up after the bound, the second runs the job.
start=$SECONDS
out=$(RDMANET_VM_HANG_BOOTS=1 RDMANET_VM_BOOT_TIMEOUT=45 "$run" --topology "$minimal" \
  --timeout 120 bash -c 'echo job-ran' 2>&1)
rc=$?
echo "$out"
t_eq "a boot that hangs before init is retried and the job runs" "$rc" 0
t_match "the hang is reported" "boot attempt 1: the guest did not reach userspace within 45s" "$out"
t_match "with the tail of its serial console" "^vm: console: .*(Kernel panic|Unable to mount root)" \
  "$out"
t_match "the second boot is announced" "^vm: booting once more" "$out"
t_match "the job ran on the second boot" "^job-ran$" "$out"
t_run "both boots took $((SECONDS - start)) s, under the bound plus a timeout" \
  test $((SECONDS - start)) -lt 165
t_eq "no qemu left behind" "$(qemus_here)" ""

out=$(RDMANET_VM_HANG_BOOTS=2 RDMANET_VM_BOOT_TIMEOUT=10 "$run" --topology "$minimal" \
  --timeout 60 true 2>&1)
rc=$?
echo "$out"
t_eq "two hung boots are a harness failure (125)" "$rc" 125
t_match "saying so" "two boots failed; the second: the guest did not reach userspace" "$out"
t_eq "no qemu left behind" "$(qemus_here)" ""

# A guest that stops after its init (RDMANET_VM_STALL_BOOTS: the guest's init waits instead of
# running the job, and QEMU is sent SIGSTOP, which freezes it as a vCPU's lost timer does): its
# heartbeat stops, the guest is killed after the bound and booted once more, and the job runs.
start=$SECONDS
out=$(RDMANET_VM_STALL_BOOTS=1 RDMANET_VM_STALL_TIMEOUT=15 "$run" --topology "$minimal" \
  --timeout 120 bash -c 'echo job-ran' 2>&1)
rc=$?
echo "$out"
t_eq "a guest that stops is booted once more and the job runs" "$rc" 0
t_match "the stop is reported" "boot attempt 1: the guest stopped: no heartbeat for 15s" "$out"
t_match "the second boot is announced" "^vm: booting once more" "$out"
t_match "the job ran on the second boot" "^job-ran$" "$out"
t_run "both boots took $((SECONDS - start)) s, under two timeouts" \
  test $((SECONDS - start)) -lt 240
t_eq "no qemu left behind (a stopped one included)" "$(qemus_here)" ""

out=$(RDMANET_VM_STALL_BOOTS=2 RDMANET_VM_STALL_TIMEOUT=10 "$run" --topology "$minimal" \
  --timeout 60 true 2>&1)
rc=$?
echo "$out"
t_eq "two stopped guests are a harness failure (125)" "$rc" 125
t_match "saying so" "two boots failed; the second: the guest stopped" "$out"
t_eq "no qemu left behind" "$(qemus_here)" ""

# QEMU itself crashing (RDMANET_VM_CRASH_BOOTS: SIGABRT once the kernel has started, as its own
# failed assertion would) is a failed boot too: the first is retried, the second is final.
out=$(RDMANET_VM_CRASH_BOOTS=1 "$run" --topology "$minimal" --timeout 120 \
  bash -c 'echo job-ran' 2>&1)
rc=$?
echo "$out"
t_eq "a boot that QEMU crashes in is retried and the job runs" "$rc" 0
t_match "the crash is reported with its signal" \
  "boot attempt 1: QEMU died of SIGABRT \(exit 134\) before the guest reported an exit code" "$out"
t_match "with the tail of its serial console" '^vm: console: \[ *[0-9.]+\] ' "$out"
t_match "the second boot is announced" "^vm: booting once more" "$out"
t_match "the job ran on the second boot" "^job-ran$" "$out"
t_eq "no qemu left behind" "$(qemus_here)" ""

out=$(RDMANET_VM_CRASH_BOOTS=2 "$run" --topology "$minimal" --timeout 60 true 2>&1)
rc=$?
echo "$out"
t_eq "two crashed boots are a harness failure (125)" "$rc" 125
t_match "saying so" "two boots failed; the second: QEMU died of SIGABRT" "$out"
t_eq "no qemu left behind" "$(qemus_here)" ""
t_eq "and no core file" "$(compgen -G "$tmp/core*")" ""

echo 'vm_qemu_args=(-device no-such-device)' >bad.sh
out=$("$run" --topology "$tmp/bad.sh" --timeout 60 true 2>&1)
rc=$?
echo "$out"
t_eq "a qemu that cannot start is a harness failure (125)" "$rc" 125
t_done
