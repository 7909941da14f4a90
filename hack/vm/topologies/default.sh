# shellcheck shell=bash disable=SC2034,SC2054
# The default VM topology: a two-socket node with one SR-IOV NIC per socket, wired to each other.
#
#   NUMA 0: CPU 0, 512 MiB, pxb-pcie (bus 0x40, numa_node 0) -> pcie-root-port -> igb (82576)
#   NUMA 1: CPU 1, 512 MiB, pxb-pcie (bus 0x80, numa_node 1) -> pcie-root-port -> igb (82576)
#   both igb ports on QEMU hub 0: a frame one sends, the other receives (and nothing else does;
#   the host's network is never touched)
#
# In the guest: PFs 0000:41:00.0 (NUMA 0) and 0000:81:00.0 (NUMA 1), driver igb, sriov_totalvfs
# 7, each with 4 VFs (igbvf) enabled at boot and the PF set up with carrier. A NIC on pcie.0
# would report numa_node -1: the expander carries the node. Each igb needs its own root port.
#
# A topology file is bash sourced by run.sh. It sets:
#   vm_mem        guest RAM in MiB (equal to the sum of the NUMA memory backends)
#   vm_smp        the -smp argument
#   vm_qemu_args  extra QEMU arguments (array)
#   vm_guest_env  NAME=VALUE settings for the guest's boot setup (array):
#                 RDMANET_VM_SRIOV_PFS  SR-IOV PFs to wait for; RDMANET_VM_NUMVFS  VFs per PF;
#                 RDMANET_VM_MODULES    drivers to load first
#   vm_kernel_args  extra kernel command line words (string, optional)
#   vm_qboot      1: boot with qboot instead of SeaBIOS (faster, but no pxb-pcie support)

vm_mem=1024
vm_smp=2,sockets=2,cores=1,threads=1
vm_qemu_args=(
  -object memory-backend-ram,id=mem0,size=512M
  -object memory-backend-ram,id=mem1,size=512M
  -numa node,nodeid=0,cpus=0,memdev=mem0
  -numa node,nodeid=1,cpus=1,memdev=mem1

  -device pxb-pcie,id=pxb0,bus=pcie.0,bus_nr=0x40,numa_node=0
  -device pcie-root-port,id=rp0,bus=pxb0,chassis=1
  -netdev hubport,id=port0,hubid=0
  -device igb,bus=rp0,netdev=port0,mac=52:54:00:12:00:01

  -device pxb-pcie,id=pxb1,bus=pcie.0,bus_nr=0x80,numa_node=1
  -device pcie-root-port,id=rp1,bus=pxb1,chassis=2
  -netdev hubport,id=port1,hubid=0
  -device igb,bus=rp1,netdev=port1,mac=52:54:00:12:00:02
)
vm_guest_env=(
  RDMANET_VM_MODULES="igb igbvf"
  RDMANET_VM_SRIOV_PFS=2
  RDMANET_VM_NUMVFS=4
)
