#!/usr/bin/env bash
# vm test: the device plugin's health model (deviceplugin/pools/health.h) on a real driver. The plugin
# serves the igb VFs of the guest's real /sys, left as boot leaves them: administratively down,
# which is not a fault, so all 8 must be Healthy and allocatable. Then:
# - a PF down (`ip link set <pf> down`) turns exactly its 4 VFs Unhealthy within 1 s, and up
#   brings them back;
# - `ip link set <pf> vf N state disable` turns only that VF Unhealthy, where the driver has
#   link-state control (igb has none: the kernel answers EOPNOTSUPP, and the unit tests cover
#   the model);
# - a VF that loses its driver (unbound from igbvf) turns only that VF Unhealthy, and rebinding
#   it brings it back.
# Each latency is printed: from the moment the command returned to the stream update.
#
#   dp_health.sh DEVICE_PLUGIN FAKE_KUBELET
set -u
# shellcheck source=tests/vm/dp_lib.sh
source "$(dirname "$0")/dp_lib.sh" dp-health "$@"

pf0=$(pf_of_numa 0)
pf1=$(pf_of_numa 1)
dp_vfs_collect
up=0
for v in "${vfs[@]}"; do
  ip -o link show "$v" | grep -q '<[^>]*\bUP\b' && up=$((up + 1))
done
t_eq "after boot, ${#vfs[@]} VFs and none administratively up" "${#vfs[@]}:$up" "8:0"
ids_of() { # ids_of PF: its VFs' PCI addresses, sorted, space-separated
  local id
  for id in "${!vf_pf[@]}"; do [[ ${vf_pf[$id]} == "$1" ]] && echo "$id"; done | sort | xargs
}

# Selected by vendor and device (igbvf's 8086:10ca), not by driver: a VF that loses its driver
# stays in the pool, Unhealthy.
dp_start '{"resourceList": [{"resourceName": "vf", "selectors": [{"vendors": ["8086"], "devices": ["10ca"]}]}]}'
KUBELET_TIMEOUT=120 t_run "the plugin registers rdma/vf" kubelet wait rdma/vf 120000
t_run "8 VFs down after boot, all Healthy" kubelet wait-healthy rdma/vf 8 8 60000
step "registered, device list:"
kubelet_table rdma/vf
t_run "a down VF is allocatable" kubelet allocate rdma/vf 1

unhealthy_of() { jq -r '[.devices[] | select(.health != "Healthy") | .id] | sort | join(" ")' <<<"$1"; }

# change SECS FILTER CMD...: runs CMD, then waits for a stream update matching FILTER; sets $ev
# and $ms (ms from CMD returning to the update; 0 if the update came first).
change() {
  local secs=$1 filter=$2 mark t
  shift 2
  mark=$(kubelet_mark)
  "$@" || return 2
  t=$(demo_now_ms)
  ev=$(kubelet_wait_event "$mark" "$secs" "$filter") || return 1
  ms=$(($(jq .t_ns <<<"$ev") / 1000000 - t))
  ((ms < 0)) && ms=0
  step "stream after '$*': $(jq .healthy <<<"$ev") of $(jq .count <<<"$ev") Healthy, ${ms} ms"
}
healthy_is() { echo ".event == \"devices\" and .healthy == $1"; }

if change 10 "$(healthy_is 4)" ip link set "$pf0" down; then
  t_eq "$pf0 down: exactly its VFs Unhealthy (${ms} ms)" "$(unhealthy_of "$ev")" "$(ids_of "$pf0")"
  t_run "$pf0 down: seen within 1 s" test "$ms" -lt 1000
else
  t_fail "$pf0 down: no update with 4 healthy devices within 10 s"
fi
# igb needs seconds to get carrier back on the port.
if change 90 "$(healthy_is 8)" ip link set "$pf0" up; then
  t_pass "$pf0 up: all 8 Healthy again (${ms} ms after ip returned)"
else
  t_fail "$pf0 up: not all Healthy within 90 s: $(unhealthy_of "$(kubelet_last devices rdma/vf)")"
fi

vf_id=$(ids_of "$pf1" | cut -d' ' -f1)
if err=$(ip link set "$pf1" vf 0 state disable 2>&1); then
  if change 10 "$(healthy_is 7)" true; then
    t_eq "vf 0 state disable: only it Unhealthy" "$(unhealthy_of "$ev")" "$vf_id"
  else
    t_fail "vf 0 state disable: no update with 7 healthy devices within 10 s"
  fi
  change 10 "$(healthy_is 8)" ip link set "$pf1" vf 0 state auto || t_fail "vf 0 state auto: no recovery"
else
  t_eq "igb has no VF link-state control (the unit tests cover the model)" \
    "$(grep -c 'Operation not supported' <<<"$err")" 1
fi

vf_netdev=$(netdev_of_pci "$vf_id")
if change 10 "$(healthy_is 7)" sh -c "echo $vf_id >/sys/bus/pci/drivers/igbvf/unbind"; then
  t_eq "VF $vf_id unbound: only it Unhealthy (${ms} ms)" "$(unhealthy_of "$ev")" "$vf_id"
  t_run "VF $vf_id unbound: seen within 1 s" test "$ms" -lt 1000
  if kubelet allocate rdma/vf "$vf_id"; then
    t_fail "Allocate of the unhealthy VF $vf_id succeeded"
  else
    t_pass "Allocate of the unhealthy VF $vf_id is refused"
  fi
else
  t_fail "VF $vf_id unbound: no update with 7 healthy devices within 10 s"
fi
if change 30 "$(healthy_is 8)" sh -c "echo $vf_id >/sys/bus/pci/drivers/igbvf/bind"; then
  t_pass "VF $vf_id bound again: Healthy (${ms} ms), netdev $(netdev_of_pci "$vf_id" || echo none) (was $vf_netdev)"
else
  t_fail "VF $vf_id bound again: not Healthy within 30 s"
fi
step "done"
t_done
