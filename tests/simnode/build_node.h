#pragma once
// buildNode(): writes a Topology (topology_model.h) into a SimTree and says what it made.
//
// Naming, so tests can predict it:
//   - bridges: root port i of a host bridge at <bus>:<i+1>.0; a switch's upstream port at
//     <secondary>:00.0, its downstream port j at <internal bus>:<j>.0 (vendor 1000:c010);
//   - a NIC with P ports on bus B: PF i at B:00.i, VF k (all PFs' VFs in order) at devfn P + k;
//   - a GPU at B:00.0;
//   - netdevs <ifprefix><nic name>f<i> and ...f<i>v<j>; ifindex from 100 up in tree order;
//     MAC 02:<prefix hash>:<nic #>:<pf #>:<vf # + 1, 0 for the PF>:00;
//   - RDMA devices mlx5_<n> in tree order (per NIC: PFs, then VFs), with uverbs<n>, umad<n>,
//     issm<n>; node_guid and RoCE GIDs (index 0 "IB/RoCE v1", 1 "RoCE v2") from the MAC.

#include <string>
#include <vector>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "tests/simnode/sim_tree.h"
#include "tests/simnode/topology_model.h"

namespace rdmanet::sim {

struct BuiltNetdev {
  std::string name{};
  PciAddress pci{};
  bool is_vf = false;
  std::string mac{};
  int ifindex = 0;
  int mtu = 1500;      // the real veth gets it too, so pods can use jumbo frames
  std::string rdma{};  // the RDMA device of the same function, empty if none
};

struct BuiltNic {
  std::string name;  // the model's name ("ens1")
  int numa_node = -1;
  std::vector<PciAddress> pfs{};
  std::vector<std::vector<PciAddress>> vfs{};  // per PF, by VF index
};

struct BuiltNode {
  std::vector<BuiltNic> nics{};
  std::vector<PciAddress> gpus{};
  std::vector<PciAddress> bridges{};
  std::vector<BuiltNetdev> netdevs{};  // every netdev, in tree order
  std::vector<std::string> rdma_devices{};
};

// Error 7 when a name would exceed 15 bytes, a bus number overflows, etc. Filesystem errors
// propagate as exceptions (see sim_tree.h).
Result<BuiltNode> buildNode(const Topology& topo, SimTree& tree);

// Rewrites a netdev's ifindex and MAC in the tree (after the real veth exists) together with
// its RDMA device's node_guid and GIDs, which derive from the MAC.
void setNetdevIdentity(SimTree& tree, const BuiltNetdev& nd, int ifindex, const std::string& mac);

// "fe80:0000:0000:0000:0e42:a1ff:fe01:0203" from "0c:42:a1:01:02:03" (modified EUI-64).
std::string linkLocalGid(const std::string& mac);
// "0e42:a1ff:fe01:0203".
std::string guidFromMac(const std::string& mac);

}  // namespace rdmanet::sim
