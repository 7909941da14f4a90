#!/bin/bash
# Stage 2 of the VM harness's guest: PID 1 after switch_root (see hack/vm/initramfs-init).
#
# Brings up the topology's SR-IOV NICs, runs the job that run.sh wrote into /run/rdmanet-vm/job
# as root in the caller's working directory with the console as stdout/stderr, writes its exit
# code to /run/rdmanet-vm/rc ("<rc>", or "infra <message>" when the harness itself failed), and
# powers off.
set -u
rundir=/run/rdmanet-vm

poweroff_now() {
  echo 1 >/proc/sys/kernel/printk # no "reboot: Power down" in the output
  sync
  # run.sh's isa-debug-exit device ends QEMU at once: an orderly power-off spends seconds under
  # TCG shutting devices down (the igb NICs). The exit code file is already written: 9p writes
  # to the run directory are synchronous.
  printf '\0' | busybox dd of=/dev/port bs=1 seek=244 count=1 conv=notrunc 2>/dev/null
  busybox poweroff -f
  echo o >/proc/sysrq-trigger
  sleep 10
}

# The harness failed (not the script): run.sh turns this into exit code 125.
infra() {
  echo "vm: infrastructure failure: $*"
  echo "infra $*" >"$rundir/rc"
  poweroff_now
}

# The console's tty translates \n to \r\n; keep the script's output byte-identical. (The rest
# of the userspace setup is done by stage 1.)
busybox stty -onlcr 2>/dev/null
# run.sh (hack/vm/boot.sh) waits for this line: the guest reached its init. From here on the
# console carries the job's output, so the kernel, which logged its boot in full, now logs at
# `quiet`'s level (warnings and worse), unless run.sh was --verbose.
[[ $(</proc/cmdline) == *rdmanet.verbose=1* ]] || echo 4 >/proc/sys/kernel/printk
echo "rdmanet-vm: init"
# The heartbeat run.sh watches (hack/vm/boot.sh): the guest's uptime, rewritten every 5 s until
# power-off. A guest that stops (under TCG a vCPU's timer can be lost for good) stops it.
(
  while :; do
    read -r up _ </proc/uptime
    echo "$up" >"$rundir/heartbeat"
    sleep 5
  done
) </dev/null >/dev/null 2>&1 &
# The harness's self-test of a stopped guest (RDMANET_VM_STALL_BOOTS): the job never runs here,
# and run.sh freezes QEMU once it reads this line.
if [[ $(</proc/cmdline) == *rdmanet.stall-on-purpose=1* ]]; then
  echo "rdmanet-vm: stalling on purpose"
  while :; do sleep 60; done
fi
export PATH=/run/vm-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

[[ -f $rundir/job ]] || infra "no job file"
# shellcheck source=/dev/null
source "$rundir/job" || infra "cannot read the job file"
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh" || infra "cannot source $RDMANET_VM_DIR/lib.sh"

read -r boot_s _ </proc/uptime
if [[ ${RDMANET_VM_SRIOV_PFS:-0} -gt 0 ]]; then
  msg=$(vm_setup_sriov "$RDMANET_VM_SRIOV_PFS" "${RDMANET_VM_NUMVFS:-0}" 2>&1) || infra "$msg"
fi

read -r uptime _ </proc/uptime
echo "vm: guest ready after ${uptime}s (userspace at ${boot_s}s; kernel" \
  "$(</proc/sys/kernel/osrelease)); running: ${RDMANET_VM_CMD[*]}"

cd "$RDMANET_VM_CWD" || infra "working directory $RDMANET_VM_CWD does not exist in the guest"
cmd=("${RDMANET_VM_CMD[@]}")
# A script without the executable bit still runs: through bash.
if [[ -f ${cmd[0]} && ! -x ${cmd[0]} ]]; then cmd=(bash "${cmd[@]}"); fi
"${cmd[@]}" </dev/null
rc=$?
cd /
echo "$rc" >"$rundir/rc"
poweroff_now
