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

# A failed boot, forced by the harness's self-test variables, three ways:
# - a hung boot (RDMANET_VM_HANG_BOOTS: no init, and the kernel stays in its panic), given up
#   after RDMANET_VM_BOOT_TIMEOUT;
# - a guest that stops after its init (RDMANET_VM_STALL_BOOTS: the init waits instead of running
#   the job, and QEMU is sent SIGSTOP, which freezes it as a vCPU's lost timer does), given up
#   when its heartbeat has not changed for RDMANET_VM_STALL_TIMEOUT;
# - QEMU itself crashing (RDMANET_VM_CRASH_BOOTS: SIGABRT once the kernel has started, as its own
#   failed assertion would).
# One is reported and booted once more; two are a harness failure.

# once_more WHAT REPORTED CONSOLE BOUND VAR=VALUE...: the first boot fails as the variables make
# it, the second runs the job. The failure is reported (REPORTED, a regex) with its console's tail
# (CONSOLE, a regex), and both boots end within BOUND seconds.
once_more() {
  local what=$1 reported=$2 console=$3 bound=$4 start=$SECONDS
  shift 4
  out=$(env "$@" "$run" --topology "$minimal" --timeout 120 bash -c 'echo job-ran' 2>&1)
  rc=$?
  echo "$out"
  t_eq "$what: booted once more, and the job runs" "$rc" 0
  t_match "$what: reported" "boot attempt 1: $reported" "$out"
  t_match "$what: with the tail of its serial console" "$console" "$out"
  t_match "$what: the second boot is announced" "^vm: booting once more" "$out"
  t_match "$what: the job ran on the second boot" "^job-ran$" "$out"
  t_run "$what: both boots took $((SECONDS - start)) s, under $bound s" \
    test $((SECONDS - start)) -lt "$bound"
  t_eq "$what: no qemu left behind" "$(qemus_here)" ""
}

# twice WHAT REPORTED VAR=VALUE...: two failed boots are a harness failure (125), saying why.
twice() {
  local what=$1 reported=$2
  shift 2
  out=$(env "$@" "$run" --topology "$minimal" --timeout 60 true 2>&1)
  rc=$?
  echo "$out"
  t_eq "two $what: a harness failure (125)" "$rc" 125
  t_match "two $what: saying so" "two boots failed; the second: $reported" "$out"
  t_eq "two $what: no qemu left behind" "$(qemus_here)" ""
}

once_more "a boot that hangs before init" "the guest did not reach userspace within 45s" \
  "^vm: console: .*(Kernel panic|Unable to mount root)" 165 \
  RDMANET_VM_HANG_BOOTS=1 RDMANET_VM_BOOT_TIMEOUT=45
twice "hung boots" "the guest did not reach userspace" \
  RDMANET_VM_HANG_BOOTS=2 RDMANET_VM_BOOT_TIMEOUT=10

once_more "a guest that stops after init" "the guest stopped: no heartbeat for 15s" \
  "^vm: console: rdmanet-vm: stalling on purpose" 240 \
  RDMANET_VM_STALL_BOOTS=1 RDMANET_VM_STALL_TIMEOUT=15
twice "stopped guests" "the guest stopped" RDMANET_VM_STALL_BOOTS=2 RDMANET_VM_STALL_TIMEOUT=10

once_more "a boot that QEMU crashes in" \
  "QEMU died of SIGABRT \(exit 134\) before the guest reported an exit code" \
  '^vm: console: \[ *[0-9.]+\] ' 240 RDMANET_VM_CRASH_BOOTS=1
twice "crashed boots" "QEMU died of SIGABRT" RDMANET_VM_CRASH_BOOTS=2
t_eq "and no core file" "$(compgen -G "$tmp/core*")" ""

echo 'vm_qemu_args=(-device no-such-device)' >bad.sh
out=$("$run" --topology "$tmp/bad.sh" --timeout 60 true 2>&1)
rc=$?
echo "$out"
t_eq "a qemu that cannot start is a harness failure (125)" "$rc" 125
t_done
