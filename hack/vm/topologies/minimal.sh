# shellcheck shell=bash disable=SC2034,SC2054
# A minimal VM topology: one NUMA node, no NICs. For scripts that only need the real kernel
# (vlan, dummy, netdevsim-free netlink tests on veth) and want the fastest boot.
# The variables are described in default.sh.
vm_mem=768
vm_smp=2
vm_qemu_args=()
vm_guest_env=()
# No pxb-pcie here, so the faster qboot firmware can boot it.
vm_qboot=1
