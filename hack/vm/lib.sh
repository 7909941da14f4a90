# shellcheck shell=bash
# Guest-side helpers of the VM harness. Guest scripts source it:
#
#   source "$RDMANET_VM_DIR/lib.sh"     # RDMANET_VM_DIR is set in every guest job
#
# Under TCG everything is slow and asynchronous (modprobe returns before netdevs exist, enabling
# VFs resets the PF for 1-2.5 s, a VF's carrier comes 2-8 s after link up), so every wait here
# polls with a deadline; none sleeps a fixed time. Netdev names do not follow PCI order: find a
# PF by its PCI device (NUMA node), never by its name.
#
# Sysfs lookups read /sys/class/net, which shows the netdevs of the caller's network namespace:
# call them in the initial netns (or pass -n NETNS where offered).

# --- waiting --------------------------------------------------------------------------------------
vm_now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# vm_poll TIMEOUT_SECS CMD...: runs CMD until it succeeds (0) or TIMEOUT_SECS pass (1).
vm_poll() {
  local timeout=$1 end
  shift
  end=$(($(vm_now_ms) + timeout * 1000))
  while :; do
    "$@" && return 0
    (($(vm_now_ms) < end)) || return 1
    sleep 0.05
  done
}

# --- PCI / netdev lookups -------------------------------------------------------------------------
# vm_sriov_pfs: PCI addresses of SR-IOV capable PFs that have a netdev, in PCI order.
vm_sriov_pfs() {
  local d
  for d in /sys/bus/pci/devices/*; do
    [[ -f $d/sriov_totalvfs && -d $d/net ]] && echo "${d##*/}"
  done
  return 0
}

# netdev_of_pci ADDR: the netdev of a PCI function (empty when it has none in this netns).
netdev_of_pci() {
  local n
  for n in /sys/bus/pci/devices/"$1"/net/*; do
    [[ -e $n ]] && echo "${n##*/}" && return 0
  done
  return 1
}

# pci_of_netdev NAME: the PCI address behind a netdev.
pci_of_netdev() {
  local p
  p=$(readlink -f "/sys/class/net/$1/device") || return 1
  [[ -n $p ]] && echo "${p##*/}"
}

# pf_pci_of_numa N: the PCI address of the first SR-IOV PF on NUMA node N.
pf_pci_of_numa() {
  local a
  for a in $(vm_sriov_pfs); do
    if [[ $(</sys/bus/pci/devices/"$a"/numa_node) == "$1" ]]; then
      echo "$a"
      return 0
    fi
  done
  return 1
}

# pf_of_numa N: the netdev name of the first SR-IOV PF on NUMA node N.
pf_of_numa() {
  local a
  a=$(pf_pci_of_numa "$1") && netdev_of_pci "$a"
}

# vf_pci_of PF IDX: PCI address of VF number IDX of the PF netdev PF.
vf_pci_of() {
  local p
  p=$(readlink -f "/sys/class/net/$1/device/virtfn$2") || return 1
  [[ -e $p ]] && echo "${p##*/}"
}

# vfs_of PF: the VF netdev names of the PF netdev PF, in VF index order (one per line).
vfs_of() {
  local n i a
  n=$(<"/sys/class/net/$1/device/sriov_numvfs") || return 1
  for ((i = 0; i < n; i++)); do
    a=$(vf_pci_of "$1" "$i") || return 1
    netdev_of_pci "$a" || return 1
  done
}

# --- links ----------------------------------------------------------------------------------------
# mac_of [-n NETNS] NAME: the MAC address of a netdev.
mac_of() {
  local nsarg=()
  if [[ $1 == -n ]]; then
    nsarg=(-n "$2")
    shift 2
  fi
  ip "${nsarg[@]}" -j link show dev "$1" | grep -o '"address":"[^"]*"' | head -n1 | cut -d'"' -f4
}

# wait_for_link NAME [TIMEOUT=15]: waits until the netdev exists in this netns.
wait_for_link() { vm_poll "${2:-15}" test -e "/sys/class/net/$1"; }

_vm_lower_up() { ip "${@:2}" -o link show dev "$1" 2>/dev/null | grep -q 'LOWER_UP'; }

# wait_carrier [-n NETNS] NAME [TIMEOUT=20]: waits until NAME (set up by the caller) has carrier.
wait_carrier() {
  local nsarg=()
  if [[ $1 == -n ]]; then
    nsarg=(-n "$2")
    shift 2
  fi
  vm_poll "${2:-20}" _vm_lower_up "$1" "${nsarg[@]}"
}

_vm_vf_netdevs_ready() {
  local pf_pci=$1 n=$2 i a
  for ((i = 0; i < n; i++)); do
    a=$(readlink -f "/sys/bus/pci/devices/$pf_pci/virtfn$i") || return 1
    [[ -d $a/net ]] && compgen -G "$a/net/*" >/dev/null || return 1
  done
}

# enable_vfs PF_PCI N [TIMEOUT=30]: sets sriov_numvfs to N and waits for every VF netdev.
enable_vfs() {
  local dev=/sys/bus/pci/devices/$1 n=$2 timeout=${3:-30} cur
  cur=$(<"$dev/sriov_numvfs") || return 1
  if [[ $cur != "$n" ]]; then
    # The kernel refuses to change a non-zero count directly.
    [[ $cur == 0 ]] || echo 0 >"$dev/sriov_numvfs" || return 1
    echo "$n" >"$dev/sriov_numvfs" || return 1
  fi
  vm_poll "$timeout" _vm_vf_netdevs_ready "$1" "$n"
}

_vm_count_pfs() { (($(vm_sriov_pfs | wc -l) >= $1)); }

# vm_setup_sriov COUNT NUMVFS: the boot-time topology setup (guest-init.sh): loads the NIC
# drivers, waits for COUNT SR-IOV PFs, enables NUMVFS VFs on each, sets the PFs up and waits for
# their carrier. Prints what went wrong and fails on timeout.
vm_setup_sriov() {
  local count=$1 numvfs=$2 m a pf
  for m in ${RDMANET_VM_MODULES:-igb igbvf}; do
    modprobe "$m" || { echo "modprobe $m failed" && return 1; }
  done
  vm_poll 30 _vm_count_pfs "$count" || {
    echo "expected $count SR-IOV PFs, found: $(vm_sriov_pfs | xargs)"
    return 1
  }
  local pids=() p
  # Each PF is set up in parallel: VF creation and link up take about a second each under TCG.
  for a in $(vm_sriov_pfs); do
    (
      if ((numvfs > 0)) && ! enable_vfs "$a" "$numvfs" 30; then
        echo "VFs of $a did not appear (sriov_numvfs=$(<"/sys/bus/pci/devices/$a/sriov_numvfs"))"
        exit 1
      fi
      # Enabling VFs resets the PF, so it is set up after.
      pf=$(netdev_of_pci "$a") || { echo "PF $a lost its netdev" && exit 1; }
      ip link set "$pf" up || exit 1
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || return 1; done
  for a in $(vm_sriov_pfs); do
    pf=$(netdev_of_pci "$a")
    wait_carrier "$pf" 30 || { echo "PF $pf ($a) has no carrier" && return 1; }
  done
}

# --- packet capture -------------------------------------------------------------------------------
# vm_capture_start IFACE OUTFILE [FILTER...]: starts `tcpdump -e -n` on IFACE (optionally inside
# a netns: VM_CAPTURE_NETNS=ns) writing text to OUTFILE; returns once tcpdump is listening.
# Sets VM_CAPTURE_PID. Not promiscuous (-p): on QEMU's igb, promiscuous mode stops the PF from
# receiving VLAN-tagged frames at all; the frames a test sends to the port's own MAC (or
# broadcast) are captured without it.
vm_capture_start() {
  local ifc=$1 out=$2
  shift 2
  local pre=()
  [[ -n ${VM_CAPTURE_NETNS:-} ]] && pre=(ip netns exec "$VM_CAPTURE_NETNS")
  "${pre[@]}" tcpdump -p -l -e -n -i "$ifc" "$@" >"$out" 2>"$out.err" &
  VM_CAPTURE_PID=$!
  vm_poll 15 grep -q 'listening on' "$out.err"
}

# vm_capture_stop: stops the capture started last and waits for it to flush.
vm_capture_stop() {
  [[ -n ${VM_CAPTURE_PID:-} ]] || return 0
  kill -INT "$VM_CAPTURE_PID" 2>/dev/null
  wait "$VM_CAPTURE_PID" 2>/dev/null
  VM_CAPTURE_PID=
}

# --- assertions -----------------------------------------------------------------------------------
# Each check prints one PASS/FAIL line; t_done prints the summary and is the script's exit code.
t_passed=0
t_failed=0
t_pass() {
  echo "PASS: $*"
  t_passed=$((t_passed + 1))
}
t_fail() {
  echo "FAIL: $*"
  t_failed=$((t_failed + 1))
}

# t_run NAME CMD...: passes when CMD succeeds; shows CMD's output when it fails.
t_run() { _t_outcome succeeds "$@"; }

# t_refused NAME CMD...: passes when CMD fails (prints the error it gave).
t_refused() { _t_outcome fails "$@"; }

# _t_outcome WANT NAME CMD...: runs CMD once and checks that it WANT (succeeds or fails).
_t_outcome() {
  local want=$1 name=$2 out got=succeeds
  shift 2
  out=$("$@" 2>&1) || got=fails
  case $want:$got in
    succeeds:succeeds) t_pass "$name" ;;
    succeeds:fails) t_fail "$name: \`$*\` failed: $out" ;;
    fails:succeeds) t_fail "$name: \`$*\` succeeded" ;;
    fails:fails) t_pass "$name (refused: ${out//$'\n'/ })" ;;
  esac
}

# t_eq NAME GOT WANT
t_eq() {
  if [[ $2 == "$3" ]]; then t_pass "$1 ($2)"; else t_fail "$1: got '$2', want '$3'"; fi
}

# t_match NAME REGEX TEXT: passes when TEXT matches the extended regex REGEX (grep -E).
t_match() {
  if grep -qE -- "$2" <<<"$3"; then
    t_pass "$1"
  else
    t_fail "$1: /$2/ not found in: $3"
  fi
}

# t_done: prints the summary; returns 1 when a check failed or none ran.
t_done() {
  echo "vm-test: $t_passed passed, $t_failed failed"
  ((t_failed == 0 && t_passed > 0))
}
