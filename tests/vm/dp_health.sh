#!/usr/bin/env bash
# vm test: the device plugin's health follows a real driver's links. The plugin serves the igb
# VFs of the guest's real /sys; the stand-in kubelet watches ListAndWatch. Taking a PF down
# (`ip link set <pf> down`) must turn exactly its VFs Unhealthy in the stream; bringing it up,
# Healthy again; a single VF going down turns only that VF Unhealthy. Each latency is printed:
# from the moment `ip` returned (the driver needs its time under TCG) to the stream update.
#
#   dp_health.sh DEVICE_PLUGIN FAKE_KUBELET
set -u
# shellcheck source=tests/vm/dp_lib.sh
source "$(dirname "$0")/dp_lib.sh" dp-health "$@"

pf0=$(pf_of_numa 0)
pf1=$(pf_of_numa 1)
dp_vfs_up
ids_of() { # ids_of PF: its VFs' PCI addresses, sorted, space-separated
  local id
  for id in "${!vf_pf[@]}"; do [[ ${vf_pf[$id]} == "$1" ]] && echo "$id"; done | sort | xargs
}

dp_start '{"resourceList": [{"resourceName": "vf", "selectors": [{"drivers": ["igbvf"]}]}]}'
KUBELET_TIMEOUT=120 t_run "the plugin registers rdma/vf" kubelet wait rdma/vf 120000
t_run "8 VFs, all Healthy" kubelet wait-healthy rdma/vf 8 8 60000
step "registered, device list:"
kubelet_table rdma/vf

unhealthy_of() { jq -r '[.devices[] | select(.health != "Healthy") | .id] | sort | join(" ")' <<<"$1"; }

# flip LINK up|down SECS FILTER: sets the link, then waits for a stream update matching FILTER;
# sets $ev and $ms (ms from `ip` returning to the update; 0 if the update came first).
flip() {
  local mark t
  mark=$(kubelet_mark)
  ip link set "$1" "$2"
  t=$(demo_now_ms)
  ev=$(kubelet_wait_event "$mark" "$3" "$4") || return 1
  ms=$(($(jq .t_ns <<<"$ev") / 1000000 - t))
  ((ms < 0)) && ms=0
  step "stream after $1 $2: $(jq .healthy <<<"$ev") of $(jq .count <<<"$ev") Healthy, ${ms} ms"
}

if flip "$pf0" down 10 '.event == "devices" and .healthy == 4'; then
  t_eq "$pf0 down: exactly its VFs Unhealthy (${ms} ms)" "$(unhealthy_of "$ev")" "$(ids_of "$pf0")"
  t_run "$pf0 down: seen within 1 s" test "$ms" -lt 1000
else
  t_fail "$pf0 down: no update with 4 healthy devices within 10 s"
fi
# igb needs seconds to get carrier back on the port and then on its VFs.
if flip "$pf0" up 90 '.event == "devices" and .healthy == 8'; then
  t_pass "$pf0 up: all 8 Healthy again (${ms} ms after ip returned)"
else
  t_fail "$pf0 up: not all Healthy within 90 s: $(unhealthy_of "$(kubelet_last devices rdma/vf)")"
fi

vf=$(vfs_of "$pf1" | head -n 1)
vf_id=$(pci_of_netdev "$vf")
if flip "$vf" down 10 '.event == "devices" and .healthy == 7'; then
  t_eq "VF $vf down: only it Unhealthy (${ms} ms)" "$(unhealthy_of "$ev")" "$vf_id"
  t_run "VF $vf down: seen within 1 s" test "$ms" -lt 1000
else
  t_fail "VF $vf down: no update with 7 healthy devices within 10 s"
fi
if flip "$vf" up 90 '.event == "devices" and .healthy == 8'; then
  t_pass "VF $vf up: Healthy again (${ms} ms after ip returned)"
else
  t_fail "VF $vf up: not Healthy within 90 s"
fi
step "done"
t_done
