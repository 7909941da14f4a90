#pragma once
// SimTree: writes a fake sysfs tree with the real kernel's shape, symlinks included, below a
// root directory that plays "/" (the same convention as rdmanet::Sysfs).
//
// Unit tests use it to build just the tree they need, including awkward cases; the simulated
// node (build_node.h) uses it to write a whole topology. All paths are in-tree absolute paths
// ("/sys/..."). Links are written relative, as the kernel shows them, e.g.
//   /sys/bus/pci/devices/0000:81:00.0 -> ../../../devices/pci0000:80/0000:80:00.0/0000:81:00.0
//   /sys/class/net/ens1f0             -> ../../devices/.../0000:81:00.0/net/ens1f0
//
// Typical use in a test:
//   SimTree t(tmpdir);
//   auto rc = t.addHostBridge(0, 0x80);                                  // pci0000:80
//   auto rp = t.addBridge(rc, {.address = pci("0000:80:01.0"), .kind = BridgeKind::kRootPort});
//   t.addFunction(rp, {.address = pci("0000:81:00.0"), .driver = "mlx5_core", .sriov_totalvfs =
//   4}); t.addFunction(rp, {.address = pci("0000:81:00.2"), .device = "101e", .driver =
//   "vfio-pci"}); t.linkVf(pci("0000:81:00.0"), pci("0000:81:00.2"), 0);
//   t.addNetdev(pci("0000:81:00.0"), {.name = "ens1f0", .ifindex = 10});
//   t.addRdmaDevice(pci("0000:81:00.0"), {.name = "mlx5_0", .uverbs = 0});
//   t.remove("/sys/bus/pci/devices/0000:81:00.0/numa_node");        // awkward case
//   rdmanet::Sysfs sysfs(t.root());
//
// Methods throw std::exception (std::filesystem::filesystem_error, std::runtime_error) on I/O
// failure or a misuse such as adding a netdev to a function that does not exist: this is test
// code, gtest reports the exception, and the simnode binary catches it in main.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/base/pci_address.h"

namespace rdmanet::sim {

// Parses a BDF or throws; for terse test code.
PciAddress pci(std::string_view bdf);

enum class BridgeKind { kRootPort, kSwitchUpstream, kSwitchDownstream };

struct BridgeSpec {
  PciAddress address{};
  BridgeKind kind = BridgeKind::kRootPort;
  std::string vendor = "8086";
  std::string device = "347a";
  std::optional<int> numa_node = 0;
  uint8_t secondary_bus = 0;  // written into the config space header
  uint8_t subordinate_bus = 0;
  // Root and downstream ports get an ACS extended capability; this turns on P2P request and
  // completion redirect (plus source validation and upstream forwarding) in its control register.
  bool acs_redirect = false;
};

struct FunctionSpec {
  PciAddress address{};
  std::string vendor = "15b3";
  std::string device = "101d";
  uint32_t class_code = 0x020000;    // Ethernet controller
  std::string driver = "mlx5_core";  // empty: unbound (no driver link)
  std::optional<int> numa_node = 0;  // nullopt: no numa_node file at all
  std::optional<int> iommu_group{};  // nullopt: no iommu_group link
  int sriov_totalvfs = 0;            // > 0 writes sriov_totalvfs/numvfs/offset/stride/vf_device
  int sriov_numvfs = 0;
  std::string sriov_vf_device = "101e";
};

struct NetdevSpec {
  std::string name{};
  int ifindex = 0;
  // The lower device's ifindex (IFLA_LINK: a macvlan's, ipvlan's or VLAN's lower, which may sit
  // in another netns); 0 writes the netdev's own ifindex, as the kernel does for a device with
  // no lower.
  int iflink = 0;
  std::string mac = "00:00:00:00:00:00";
  int mtu = 1500;
  std::string operstate = "up";            // carrier is written as 1 when "up", else 0
  std::optional<int> speed_mbps = 100000;  // nullopt writes -1 (what a down link reports)
  int type = 1;                            // 1 ARPHRD_ETHER, 32 ARPHRD_INFINIBAND
};

struct GidSpec {
  int index = 0;
  std::string gid{};  // "fe80:0000:0000:0000:0e42:a1ff:fe00:0000"
  std::string type = "RoCE v2";
  std::string ndev{};
};

struct RdmaPortSpec {
  bool active = true;  // state "4: ACTIVE"/"1: DOWN", phys_state "5: LinkUp"/"3: Disabled"
  std::string link_layer = "Ethernet";
  std::vector<GidSpec> gids{};
  int gid_table_size = 8;  // unused entries are written as all-zero GIDs, like the kernel
};

struct RdmaSpec {
  std::string name{};  // "mlx5_0", "rxe0"
  std::string node_guid = "0e42:a1ff:fe00:0000";
  std::vector<RdmaPortSpec> ports = {RdmaPortSpec{}};
  std::optional<int> uverbs{};  // N of uverbsN (231:192+N); nullopt: none
  std::optional<int> umad{};    // N of umadN (231:N) and issmN (231:64+N); nullopt: none
};

class SimTree {
 public:
  // Creates the root's skeleton (sys/bus/pci/devices, sys/class/{net,infiniband,...}).
  explicit SimTree(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }
  // Host path of an in-tree path.
  std::filesystem::path host(std::string_view abs) const;

  // --- building ---
  // /sys/devices/pci<dom>:<bus>; returns that in-tree dir.
  std::string addHostBridge(uint16_t domain, uint8_t bus);
  // A PCI bridge (pcieport) below `parent_dir`, with a 4096-byte config space. Returns its dir.
  std::string addBridge(const std::string& parent_dir, const BridgeSpec& spec);
  // An endpoint function below `parent_dir`, plus its bus/pci/devices link and driver link.
  std::string addFunction(const std::string& parent_dir, const FunctionSpec& spec);
  // PF virtfn<index> -> VF and VF physfn -> PF.
  void linkVf(const PciAddress& pf, const PciAddress& vf, int index);
  // <fn dir>/net/<name> with its attributes, a `device` link and /sys/class/net/<name>.
  std::string addNetdev(const PciAddress& fn, const NetdevSpec& spec);
  // /sys/devices/virtual/net/<name> (a veth or bridge: no device link).
  std::string addVirtualNetdev(const NetdevSpec& spec);
  // <fn dir>/infiniband/<name> with ports, `device` link, class link and char devices under
  // <fn dir>/infiniband_verbs and infiniband_mad (plus their class links), and rdma_cm.
  std::string addRdmaDevice(const PciAddress& fn, const RdmaSpec& spec);
  // Soft-RoCE style: /sys/devices/virtual/infiniband/<name> with `parent` naming the netdev.
  std::string addSoftRdma(const RdmaSpec& spec, const std::string& parent_netdev);

  // --- editing (awkward cases, link flaps) ---
  void writeAttr(const std::string& abs, const std::string& value);
  // Removes a file, link or whole directory; missing is fine.
  void remove(const std::string& abs);
  // Creates (or replaces) a link at `link_abs` whose relative target is `target_abs`; the
  // target need not exist, which is how tests make a broken link.
  void symlink(const std::string& link_abs, const std::string& target_abs);
  // Rebinds a function: rewrites its driver link ("" unbinds). Binding away from the NIC driver
  // (e.g. "vfio-pci") also removes its netdevs and RDMA devices, as the kernel does.
  void bindDriver(const PciAddress& fn, const std::string& driver);
  // Removes a netdev (its dir under the function and its class link).
  void removeNetdev(const std::string& name);
  // operstate "up"/"down" and carrier 1/0 of a netdev.
  void setNetdevUp(const std::string& name, bool up);
  // Port state of an RDMA device: ACTIVE/LinkUp or DOWN/Disabled.
  void setRdmaPortActive(const std::string& dev, int port, bool active);
  // In-tree canonical directory of a function added with addFunction/addBridge.
  std::string dirOf(const PciAddress& fn) const;

 private:
  void mkdirs(const std::string& abs);
  void writeCharDev(const std::string& fn_dir, const std::string& sub, const std::string& cls,
                    const std::string& name, const std::string& ibdev, int major, int minor,
                    std::optional<int> port);

  std::filesystem::path root_;
};

// The 4096-byte config space of a PCIe bridge: type-1 header, PCI Express capability, and for
// root/downstream ports an AER and an ACS extended capability (ACS at offset 0x148).
std::vector<uint8_t> bridgeConfigSpace(const BridgeSpec& spec);
inline constexpr uint16_t kAcsCapOffset = 0x148;

}  // namespace rdmanet::sim
