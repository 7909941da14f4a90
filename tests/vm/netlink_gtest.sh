#!/usr/bin/env bash
# vm test (run inside the guest by hack/vm/run.sh): the netlink engineer's real-kernel gtest binary
# (tests/common/net, label netns) on a kernel with 8021q and SR-IOV, where its VLAN and VF tests
# skip on the host. RDMANET_TEST_PF is the NUMA 0 igb PF (with 4 VFs).
#   netlink_gtest.sh BINARY [GTEST ARGS...]
# Fails when the binary fails, when a VLAN test skipped (this kernel has 8021q), or when the VF
# VLAN/QoS, the PF parent-device or the RDMA links (Soft-RoCE) test did not pass. igb refusing a knob (link state) is a skip, which is the real
# driver's answer.
set -u
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"

bin=${1:?usage: netlink_gtest.sh BINARY [GTEST ARGS...]}
shift
RDMANET_TEST_PF=$(pf_of_numa 0)
export RDMANET_TEST_PF
echo "RDMANET_TEST_PF=$RDMANET_TEST_PF ($(pci_of_netdev "$RDMANET_TEST_PF"))"

out=$("$bin" "$@" 2>&1)
rc=$?
echo "$out"
t_eq "$(basename "$bin") exit code" "$rc" 0
t_run "no VLAN test skipped" bash -c '! grep -E "^\[  SKIPPED \] LibnlVlanTest\." <<<"$1"' _ "$out"
t_match "VF vlan+qos test ran and passed" '^\[       OK \] LibnlVfTest\.SetsAndReadsVlanAndQos' "$out"
t_match "PF parent device test ran and passed" \
  '^\[       OK \] LibnlVfTest\.PfReportsItsPciFunctionAsParentDevice' "$out"
t_match "RDMA links test (Soft-RoCE) ran and passed" '^\[       OK \] LibnlRdmaTest\.' "$out"
t_done
