#pragma once
// The simulated node's topology: a PCIe tree of host bridges, switches, NICs and GPUs, read
// from JSON (hack/topologies/*.json) and written out by buildNode() (build_node.h).
//
// JSON shape (every field but the structure is optional; defaults are a ConnectX-class RoCE
// NIC and an H100-class GPU):
//   {
//     "name": "default", "ifprefix": "",
//     "host_bridges": [
//       { "domain": 0, "bus": "0x00", "numa_node": 0,
//         "root_ports": [                                    // one slot per root port
//           { "acs_redirect": false,                         // ACS on the port above the slot
//             "switch": { "acs_redirect": false,             // default for its downstream ports
//                         "downstream": [ { "nic": {...} }, { "gpu": {...} } ] } } ] } ] }
//   nic: name ("ens1": PF i is <ifprefix>ens1f<i>, its VF j <ifprefix>ens1f<i>v<j>), vendor,
//        pf_device, vf_device, class ("0x020000"), driver, vf_driver, ports (PFs), vfs_per_port,
//        total_vfs, rdma, vf_rdma, rdma_kind, vf_rdma_at, link_layer ("Ethernet"), speed (Mb/s),
//        mtu
//     rdma_kind "mlx5" (default): a hardware RDMA device under each function, as mlx5_ib makes;
//               "rxe": Soft-RoCE instead, on each netdev and on a macvlan (PF) or ipvlan (VF)
//               upper of it, as `rdma link add` makes them.
//     vf_rdma_at where a VF's hardware RDMA device shows: "class" (default: under the function
//               and in /sys/class/infiniband), "no-class" (under the function only),
//               "other-netns" (moved to a pod in exclusive RDMA netns mode: neither; its char
//               devices stay).
//   gpu: vendor, device, class ("0x030200"), driver
// Bus numbers are assigned depth first from the host bridge's bus + 1, as firmware does.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::sim {

struct NicModel {
  std::string name = "ens1";
  std::string vendor = "15b3";
  std::string pf_device = "101d";
  std::string vf_device = "101e";
  uint32_t class_code = 0x020000;
  std::string driver = "mlx5_core";
  std::string vf_driver = "mlx5_core";
  int ports = 2;
  int vfs_per_port = 4;
  int total_vfs = 8;
  bool rdma = true;
  bool vf_rdma = true;
  std::string rdma_kind = "mlx5";    // "mlx5" | "rxe"
  std::string vf_rdma_at = "class";  // "class" | "no-class" | "other-netns"
  std::string link_layer = "Ethernet";
  int speed_mbps = 100000;
  int mtu = 1500;
};

struct GpuModel {
  std::string vendor = "10de";
  std::string device = "2330";
  uint32_t class_code = 0x030200;
  std::string driver = "nvidia";
};

// What hangs off one root port or switch downstream port.
struct SlotModel {
  enum class Kind { kEmpty, kSwitch, kNic, kGpu };
  Kind kind = Kind::kEmpty;
  bool acs_redirect = false;            // ACS P2P redirect on the port above this slot
  NicModel nic{};                       // kNic
  GpuModel gpu{};                       // kGpu
  bool switch_acs_redirect = false;     // kSwitch: default for its downstream ports
  std::vector<SlotModel> downstream{};  // kSwitch: one downstream port per entry
};

struct HostBridgeModel {
  uint16_t domain = 0;
  uint8_t bus = 0;
  int numa_node = 0;  // -1: no NUMA affinity (written as -1, like the kernel)
  std::vector<SlotModel> root_ports{};
};

struct Topology {
  std::string name{};
  std::string ifprefix{};  // prepended to every netdev name; lets two simnodes coexist
  std::vector<HostBridgeModel> host_bridges{};
};

// Error 6 for JSON that does not parse, 7 for a wrong type or value (message names the key).
Result<Topology> parseTopology(std::string_view json);
Result<Topology> loadTopology(const std::filesystem::path& file);

}  // namespace rdmanet::sim
