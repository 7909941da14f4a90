#!/usr/bin/env bash
# Runs a command as root inside a throw-away VM with a real Debian kernel, SR-IOV NICs and
# two NUMA nodes, and exits with the command's exit code. See hack/vm/README.md.
#
#   hack/vm/run.sh [--topology FILE] [--timeout SECS] [--env NAME[=VALUE]]... [--verbose]
#                  [--interactive] SCRIPT [ARGS...]
#
# The guest's / is the host's / (read-only, under a tmpfs overlay that vanishes at power-off),
# so SCRIPT, our freshly built binaries and every host tool are visible at their host paths.
# SCRIPT runs in the caller's working directory with the console as stdout/stderr, which run.sh
# prints. Variables named RDMANET_* or GTEST_* are passed into the guest, as is every --env
# (NAME alone passes the host's value). Guest scripts get RDMANET_VM_DIR (this directory: source
# $RDMANET_VM_DIR/lib.sh for helpers) and RDMANET_VM_OUT, a directory whose files run.sh copies
# to the host directory named by the host's RDMANET_VM_OUT_DIR, when set.
#
# --interactive connects this terminal to the guest's serial console (QEMU's stdin; Ctrl-A x
# quits QEMU) and tells the guest so (RDMANET_VM_INTERACTIVE=1): SCRIPT may then open /dev/ttyS0
# for a shell. Without it the console has no input.
#
# Exit codes: SCRIPT's own; 124 on timeout (default 300 s, boot included); 125 when the
# harness failed (no qemu, kernel download, boot, topology setup).
#
# The guest's serial console (kernel messages from the first line on) goes to a console log;
# run.sh prints it live from the moment the guest's init starts (all of it with --verbose). A
# failed boot is a guest that has not reached init within RDMANET_VM_BOOT_TIMEOUT seconds
# (default 90), a guest that stopped after it (its heartbeat, rewritten every 5 s, unchanged for
# RDMANET_VM_STALL_TIMEOUT seconds, default 60: under TCG a vCPU's timer can be lost for good),
# or a QEMU that died of a signal (its own failed assertion, say) before the guest reported its
# exit code: run.sh prints the tail of its console, kills it and boots once more, saying so (the
# job runs again from the start, in a fresh guest); a second failed boot is a harness failure. Any failure prints the tail of the
# console log from before init, and the whole log is copied to RDMANET_VM_OUT_DIR/console.log
# when that is set.
#
# Environment: RDMANET_VM_TIMEOUT (default --timeout; a retried boot gets it afresh),
# RDMANET_VM_BOOT_TIMEOUT, RDMANET_VM_ACCEL (default tcg; CI has no KVM), RDMANET_VM_CACHE /
# RDMANET_VM_KERNEL (see prepare.sh), RDMANET_VM_KEEP=1 keeps the run directory (console log,
# job, exit code) under /tmp for debugging, RDMANET_VM_HANG_BOOTS=N makes the first N boots hang
# before init, RDMANET_VM_STALL_BOOTS=N stops the guest after init in them (QEMU is sent SIGSTOP)
# and RDMANET_VM_CRASH_BOOTS=N makes QEMU abort in them (the harness's self-test:
# tests/vm/run_contract.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
start=$SECONDS

usage() {
  sed -n '2,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
  exit 125
}
infra() {
  echo "vm: error: $*" >&2
  print_console
  exit 125
}
# shellcheck source=hack/vm/boot.sh
source "$here/boot.sh"

topology=$here/topologies/default.sh
timeout=${RDMANET_VM_TIMEOUT:-300}
boot_timeout=${RDMANET_VM_BOOT_TIMEOUT:-90}
hang_boots=${RDMANET_VM_HANG_BOOTS:-0}
crash_boots=${RDMANET_VM_CRASH_BOOTS:-0}
stall_boots=${RDMANET_VM_STALL_BOOTS:-0}
stall_timeout=${RDMANET_VM_STALL_TIMEOUT:-60}
verbose=0
interactive=0
extra_env=()
while (($#)); do
  case $1 in
    --topology) topology=${2:?--topology needs a file} && shift 2 ;;
    --timeout) timeout=${2:?--timeout needs seconds} && shift 2 ;;
    --env) extra_env+=("${2:?--env needs NAME[=VALUE]}") && shift 2 ;;
    --verbose) verbose=1 && shift ;;
    --interactive) interactive=1 && shift ;;
    -h | --help) usage ;;
    --) shift && break ;;
    -*) echo "vm: unknown option $1" >&2 && usage ;;
    *) break ;;
  esac
done
(($#)) || usage
[[ $timeout =~ ^[0-9]+$ ]] || infra "--timeout must be whole seconds, got '$timeout'"
[[ $boot_timeout =~ ^[0-9]+$ ]] || infra "RDMANET_VM_BOOT_TIMEOUT must be whole seconds"
[[ $hang_boots =~ ^[0-9]+$ ]] || infra "RDMANET_VM_HANG_BOOTS must be a count"
[[ $crash_boots =~ ^[0-9]+$ ]] || infra "RDMANET_VM_CRASH_BOOTS must be a count"
[[ $stall_boots =~ ^[0-9]+$ ]] || infra "RDMANET_VM_STALL_BOOTS must be a count"
[[ $stall_timeout =~ ^[1-9][0-9]*$ ]] || infra "RDMANET_VM_STALL_TIMEOUT must be whole seconds"
[[ -f $topology ]] || infra "topology $topology not found"

qemu=$(command -v qemu-system-x86_64) || infra "qemu-system-x86_64 not found (hack/install-deps.sh)"
assets=$("$here/prepare.sh") || infra "asset preparation failed"
kver=${assets##*/}
initramfs=$(compgen -G "$assets/initramfs-*.cpio.gz" | head -n1) || infra "no initramfs in $assets"

vm_mem=1024 vm_smp=2 vm_kernel_args='' vm_qboot=0
vm_qemu_args=() vm_guest_env=()
# shellcheck source=hack/vm/topologies/default.sh
source "$topology"

# Run directories of run.sh processes that were killed outright (SIGKILL skips the trap).
for d in /tmp/rdmanet-vm.*; do
  if [[ -f $d/owner ]] && ! kill -0 "$(<"$d/owner")" 2>/dev/null; then rm -rf "$d"; fi
done
rundir=$(mktemp -d /tmp/rdmanet-vm.XXXXXX)
echo $$ >"$rundir/owner"
pid=
relay=
cleanup() {
  local p
  for p in $pid $relay; do
    if kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  if [[ ${RDMANET_VM_KEEP:-0} == 1 ]]; then
    rm -f "$rundir/owner"
    echo "vm: kept run directory $rundir" >&2
  else
    rm -rf "$rundir"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The job file: sourced by guest-init.sh before anything else runs.
cmd=("$@")
# An existing file is passed by absolute path; anything else is looked up on the guest's PATH.
if [[ -f ${cmd[0]} ]]; then cmd[0]=$(realpath "${cmd[0]}"); fi
{
  printf 'export RDMANET_VM_DIR=%q\n' "$here"
  printf 'export RDMANET_VM_OUT=/run/rdmanet-vm/out\n'
  for kv in "${vm_guest_env[@]}"; do
    printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"
  done
  while IFS= read -r name; do
    printf 'export %s=%q\n' "$name" "${!name}"
  done < <(compgen -e | grep -E '^(RDMANET_|GTEST_)' | grep -vE '^RDMANET_VM_(DIR|OUT|CWD|CMD)$')
  for kv in "${extra_env[@]}"; do
    name=${kv%%=*}
    [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || infra "--env: bad variable name '$name'"
    if [[ $kv == *=* ]]; then value=${kv#*=}; else value=${!name-}; fi
    printf 'export %s=%q\n' "$name" "$value"
  done
  ((interactive)) && printf 'export RDMANET_VM_INTERACTIVE=1\n'
  printf 'RDMANET_VM_CWD=%q\n' "$(pwd -P)"
  printf 'RDMANET_VM_CMD=('
  printf ' %q' "${cmd[@]}"
  printf ' )\n'
} >"$rundir/job"
cp "$here/guest-init.sh" "$rundir/guest-init.sh"
mkdir -p "$rundir/out"

# Without `quiet` the kernel logs its whole boot to the console log (what a hung boot leaves to
# read); guest-init.sh lowers the console log level to quiet's once it runs.
append="console=ttyS0 panic=-1 rdmanet.modules=$assets/modules/lib/modules $vm_kernel_args"
((verbose)) && append+=" rdmanet.verbose=1"
# shellcheck disable=SC2054 # QEMU options contain commas
qemu_args=(
  -accel "${RDMANET_VM_ACCEL:-tcg}" -M q35 -m "$vm_mem" -smp "$vm_smp"
  -nographic -nodefaults -serial mon:stdio -no-reboot
  -kernel "$assets/vmlinux" -initrd "$initramfs"
  -fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
  -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
  -fsdev "local,id=rundir,path=$rundir,security_model=none,multidevs=remap"
  -device virtio-9p-pci,fsdev=rundir,mount_tag=rundir
  -device isa-debug-exit,iobase=0xf4,iosize=0x04
  "${vm_qemu_args[@]}"
)
# qboot (part of QEMU's data package) boots a -kernel faster than SeaBIOS, but it does not
# enumerate pxb-pcie expanders: topologies without them may opt in with vm_qboot=1.
qboot=$(dirname "$(realpath "$qemu")")/../share/qemu/qboot.rom
if [[ $vm_qboot == 1 && -f $qboot ]]; then
  qemu_args+=(-bios "$qboot")
else
  # SeaBIOS would draw its banner on the serial console (there is no VGA).
  # shellcheck disable=SC2054
  qemu_args+=(-fw_cfg name=etc/sercon-port,string=0)
fi
# QEMU's stdin is the console's input: none, unless --interactive. (A background job's stdin is
# /dev/null unless redirected, hence the explicit copy of ours.)
qemu_in=/dev/null
((interactive)) && exec {qemu_fd}<&0 && qemu_in=/dev/fd/$qemu_fd
console=$rundir/console.log
# A crashed QEMU would otherwise leave a core the size of the guest's memory.
ulimit -c 0
echo "vm: booting kernel $kver ($(basename "$topology" .sh) topology, timeout ${timeout}s)" >&2
for attempt in 1 2; do
  qrc=0
  boot_guest "$attempt" || qrc=$?
  why=$(failed_boot "$qrc")
  [[ -n $why ]] || break
  report_failed_boot "$attempt" "$why"
  ((attempt == 1)) || infra "two boots failed; the second: $why"
  echo "vm: booting once more (boot attempt 2 of 2, timeout ${timeout}s)" >&2
done

if [[ -n ${RDMANET_VM_OUT_DIR:-} ]]; then
  mkdir -p "$RDMANET_VM_OUT_DIR" && cp "$console" "$RDMANET_VM_OUT_DIR/console.log"
  if compgen -G "$rundir/out/*" >/dev/null; then cp -r "$rundir/out/." "$RDMANET_VM_OUT_DIR/"; fi
fi
if ((qrc == 124 || qrc == 137)); then
  echo "vm: timed out after ${timeout}s" >&2
  print_console
  exit 124
fi
rc=$(cat "$rundir/rc" 2>/dev/null) || infra "the guest reported no exit code (qemu exit $qrc): boot failed?"
case $rc in
  infra*) infra "${rc#infra }" ;;
  *[!0-9]* | '') infra "unreadable exit code '$rc'" ;;
esac
echo "vm: exit code $rc after $((SECONDS - start))s" >&2
((rc == 0)) || print_console
exit "$rc"
