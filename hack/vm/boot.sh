# shellcheck shell=bash
# shellcheck disable=SC2154 # run.sh's variables, listed below
# hack/vm/boot.sh: sourced by run.sh. One boot of the guest: QEMU's serial console goes to a log
# ($console), which is relayed live from the line guest-init.sh prints first (everything with
# --verbose or --interactive), and a boot that does not reach that line within $boot_timeout
# seconds is a hung boot. From init on, guest-init.sh beats a heartbeat into the run directory;
# a guest whose heartbeat stops for $stall_timeout seconds has stopped (under TCG a vCPU's timer
# can be lost for good: the kernel then reports an RCU stall and makes no more progress), and is
# killed. Uses run.sh's variables (qemu, qemu_args, append, qemu_in, timeout, boot_timeout,
# stall_timeout, hang_boots, crash_boots, stall_boots, verbose, interactive, rundir) and sets
# pid/relay for its cleanup.

# The first line of guest-init.sh: the guest reached its init.
vm_marker='rdmanet-vm: init'
# What guest-init.sh prints, instead of running the job, in the self-test's stopped guest.
vm_stall_marker='rdmanet-vm: stalling on purpose'
console=
printed_console=0

# boot_guest ATTEMPT: boots, relays the console and waits for QEMU to end. Returns QEMU's exit
# status (124 or 137 on timeout, 128+N when QEMU died of signal N), 200 when the guest did not
# reach init in time, or 201 when its heartbeat stopped (QEMU is killed in both).
boot_guest() {
  local attempt=$1 extra='' deadline rc=0 crash=0 stall=0
  # The self-test's hang: no init to run, so the kernel panics, and panic=0 keeps it there.
  ((attempt <= hang_boots)) && extra=' rdinit=/rdmanet-vm-hang-on-purpose panic=0'
  # The self-test's emulator crash: QEMU is sent SIGABRT once the kernel has started, as its own
  # failed assertion would.
  ((attempt <= crash_boots)) && crash=1
  # The self-test's stopped guest: its init says where it waits instead of running the job, and
  # QEMU is then sent SIGSTOP, which freezes it as a lost timer does (no progress, no heartbeat);
  # SIGCONT is never sent.
  ((attempt <= stall_boots)) && stall=1 && extra=' rdmanet.stall-on-purpose=1'
  : >"$console"
  rm -f "$rundir/rc" "$rundir/heartbeat"
  # pdeathsig on both levels: if run.sh is killed outright (even SIGKILL), timeout and qemu die.
  setpriv --pdeathsig KILL timeout --foreground -k 5 "$timeout" \
    setpriv --pdeathsig KILL "$qemu" "${qemu_args[@]}" -append "$append$extra" \
    <"$qemu_in" >"$console" \
    2> >(grep --line-buffered -v -e 'should be prefixed with "opt/"' \
      -e 'is not connected to host network' >&2) &
  pid=$!
  if ((verbose || interactive)); then
    tail -s 0.1 -n +1 -f --pid="$pid" "$console" &
  else
    tail -s 0.1 -n +1 -f --pid="$pid" "$console" | sed -u "0,/^$vm_marker/d" &
  fi
  relay=$!
  deadline=$((SECONDS + boot_timeout))
  until grep -q "^$vm_marker" "$console"; do
    kill -0 "$pid" 2>/dev/null || break # QEMU ended early: run.sh reports why
    # $pid is timeout's; QEMU is its only child.
    if ((crash)) && grep -q "Linux version" "$console" && pkill -ABRT -P "$pid"; then crash=0; fi
    if ((SECONDS >= deadline)); then
      kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      wait "$relay" 2>/dev/null
      pid='' relay=''
      return 200
    fi
    sleep 0.2
  done
  if ((stall)); then
    while kill -0 "$pid" 2>/dev/null && ! grep -q "^$vm_stall_marker" "$console"; do sleep 0.2; done
    pkill -STOP -P "$pid"
  fi
  watch_heartbeat || rc=$?
  ((rc == 201)) || { wait "$pid" || rc=$?; }
  wait "$relay" 2>/dev/null
  pid='' relay=''
  return "$rc"
}

# watch_heartbeat: while QEMU runs, the guest's heartbeat (its uptime, rewritten every few
# seconds by guest-init.sh) must change at least every $stall_timeout seconds of host time.
# Returns 201 once it has not (QEMU, timeout's only child, is killed outright: a stopped process
# would not act on SIGTERM), 0 when QEMU ends.
watch_heartbeat() {
  local beat='' last seen=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    last=$(cat "$rundir/heartbeat" 2>/dev/null) || last=''
    if [[ $last != "$beat" ]]; then
      beat=$last seen=$SECONDS
    elif ((SECONDS - seen >= stall_timeout)) && [[ ! -e $rundir/rc ]]; then
      pkill -KILL -P "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      return 201
    fi
    sleep 1
  done
  return 0
}

_console_lines() { tr -d '\r' | tail -n "${1:-40}" | sed 's/^/vm: console: /' >&2; }

# failed_boot QRC: why a boot is worth one more, or nothing when it is not: the guest did not
# reach its init in time (200), stopped after it (201), or QEMU itself died of a signal (an
# emulator fault, such as a failed assertion, not the guest's) before the guest reported its exit
# code. Timeouts (124; 137
# when timeout had to SIGKILL) and QEMU's own error exits are final.
failed_boot() {
  local qrc=$1 sig
  if ((qrc == 200)); then
    echo "the guest did not reach userspace within ${boot_timeout}s (no '$vm_marker' line)"
  elif ((qrc == 201)); then
    echo "the guest stopped: no heartbeat for ${stall_timeout}s (an emulator hang)"
  elif ((qrc > 128 && qrc != 137)) && [[ ! -e $rundir/rc ]]; then
    sig=$(kill -l $((qrc - 128)) 2>/dev/null) || sig=$((qrc - 128))
    echo "QEMU died of SIG$sig (exit $qrc) before the guest reported an exit code"
  fi
}

# report_failed_boot ATTEMPT WHY: a failed boot and what it left on its console.
report_failed_boot() {
  echo "vm: boot attempt $1: $2; the last lines of its serial console:" >&2
  _console_lines 40 <"$console"
  printed_console=1
}

# print_console: on a failure, the console up to the guest's init (the rest was relayed live),
# once.
print_console() {
  [[ -n $console && -s $console ]] || return 0
  ((printed_console == 0)) || return 0
  printed_console=1
  echo "vm: the serial console up to the guest's init (last 40 lines; RDMANET_VM_OUT_DIR gets" \
    "the whole log):" >&2
  sed -n "1,/^$vm_marker/p" "$console" | _console_lines 40
}
