# shellcheck shell=bash disable=SC2034,SC2054
# A node of the VM cluster (hack/cluster/vmnodes.sh): one socket, one SR-IOV NIC, and a
# management NIC. The host's taps are made before the boot; QEMU only opens them.
#
#   NUMA 0: CPUs 0-1, 2 GiB, pxb-pcie (bus 0x40, numa_node 0) -> pcie-root-port -> igb (82576)
#   igb port    -> tap rdmcd<i>, a port of the host bridge rdmcd: the data network's switch,
#                  where every node's RDMA frames meet (a capture on rdmcd is the wire)
#   virtio-net  -> tap rdmcm<i>, a port of the host bridge rdmc0: the control plane's network
#                  (the API server, kubelet's own port, the pods' eth0 routes)
#
# RDMANET_CLUSTER_VM_INDEX (1..8) picks the taps and the MACs; run.sh also hands it to the guest.
i=${RDMANET_CLUSTER_VM_INDEX:?RDMANET_CLUSTER_VM_INDEX is the node index (1..8)}
vm_mem=2048
vm_smp=2,sockets=1,cores=2,threads=1
vm_qemu_args=(
  -object memory-backend-ram,id=mem0,size=2048M
  -numa node,nodeid=0,cpus=0-1,memdev=mem0

  -device pxb-pcie,id=pxb0,bus=pcie.0,bus_nr=0x40,numa_node=0
  -device pcie-root-port,id=rp0,bus=pxb0,chassis=1
  -netdev "tap,id=data0,ifname=rdmcd$i,script=no,downscript=no"
  -device "igb,bus=rp0,netdev=data0,mac=52:54:00:2d:00:0$i"

  -netdev "tap,id=mgmt0,ifname=rdmcm$i,script=no,downscript=no"
  -device "virtio-net-pci,bus=pcie.0,netdev=mgmt0,mac=52:54:00:2c:00:0$i"
)
vm_guest_env=(
  RDMANET_VM_MODULES="igb igbvf virtio_net"
  RDMANET_VM_SRIOV_PFS=1
  RDMANET_VM_NUMVFS=4
)
