#include "tests/simnode/build_node.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "common/base/mac_address.h"
#include "common/inventory/netdev.h"

namespace rdmanet::sim {
namespace {

constexpr int kFirstIfindex = 100;
constexpr const char* kSwitchVendor = "1000";  // a PEX-class PCIe switch
constexpr const char* kSwitchDevice = "c010";

std::array<uint8_t, 6> macBytes(const std::string& mac) {
  auto m = MacAddress::parse(mac);
  return m.ok() ? m->bytes : std::array<uint8_t, 6>{};
}

// Buses a slot uses beyond the one it sits on: a switch's internal bus, then per downstream
// port its secondary bus and whatever hangs below.
int extraBuses(const SlotModel& s) {
  if (s.kind != SlotModel::Kind::kSwitch) return 0;
  int n = 1;
  for (const auto& c : s.downstream) n += 1 + extraBuses(c);
  return n;
}

PciAddress at(uint16_t domain, int bus, int devfn) {
  return PciAddress{.domain = domain,
                    .bus = static_cast<uint8_t>(bus),
                    .device = static_cast<uint8_t>(devfn >> 3),
                    .function = static_cast<uint8_t>(devfn & 7)};
}

class Builder {
 public:
  Builder(const Topology& topo, SimTree& tree) : topo_(topo), t_(tree) {
    unsigned h = 0;
    for (unsigned char c : topo.ifprefix) h = h * 31 + c;
    prefix_hash_ = static_cast<uint8_t>(h & 0xff);
  }

  Result<BuiltNode> run() {
    for (const auto& hb : topo_.host_bridges) {
      domain_ = hb.domain;
      numa_ = hb.numa_node;
      next_bus_ = hb.bus + 1;
      const std::string hb_dir = t_.addHostBridge(hb.domain, hb.bus);
      for (size_t i = 0; i < hb.root_ports.size(); ++i) {
        const SlotModel& slot = hb.root_ports[i];
        RDMANET_ASSIGN_OR_RETURN(int sec, allocBus());
        const auto rp = at(domain_, hb.bus, static_cast<int>(i + 1) << 3);
        const std::string rp_dir = addPort(hb_dir, rp, BridgeKind::kRootPort, sec,
                                           sec + extraBuses(slot), slot.acs_redirect);
        RDMANET_RETURN_IF_ERROR(placeSlot(slot, rp_dir, sec));
      }
    }
    return std::move(out_);
  }

 private:
  Result<int> allocBus() {
    if (next_bus_ > 0xff) return makeError(ErrorCode::kInvalidConfig, "topology needs > 256 buses");
    return next_bus_++;
  }

  std::string addPort(const std::string& parent, const PciAddress& a, BridgeKind kind, int sec,
                      int sub, bool acs) {
    const bool sw = kind != BridgeKind::kRootPort;
    out_.bridges.push_back(a);
    return t_.addBridge(parent, BridgeSpec{.address = a,
                                           .kind = kind,
                                           .vendor = sw ? kSwitchVendor : "8086",
                                           .device = sw ? kSwitchDevice : "347a",
                                           .numa_node = numa_,
                                           .secondary_bus = static_cast<uint8_t>(sec),
                                           .subordinate_bus = static_cast<uint8_t>(sub),
                                           .acs_redirect = acs});
  }

  Status placeSlot(const SlotModel& s, const std::string& parent, int bus) {
    switch (s.kind) {
      case SlotModel::Kind::kEmpty:
        return okStatus();
      case SlotModel::Kind::kGpu: {
        const auto a = at(domain_, bus, 0);
        t_.addFunction(parent, FunctionSpec{.address = a,
                                            .vendor = s.gpu.vendor,
                                            .device = s.gpu.device,
                                            .class_code = s.gpu.class_code,
                                            .driver = s.gpu.driver,
                                            .numa_node = numa_,
                                            .iommu_group = next_iommu_++});
        out_.gpus.push_back(a);
        return okStatus();
      }
      case SlotModel::Kind::kNic:
        return placeNic(s.nic, parent, bus);
      case SlotModel::Kind::kSwitch: {
        RDMANET_ASSIGN_OR_RETURN(int internal, allocBus());
        const std::string up_dir = addPort(parent, at(domain_, bus, 0), BridgeKind::kSwitchUpstream,
                                           internal, bus + extraBuses(s), false);
        for (size_t j = 0; j < s.downstream.size(); ++j) {
          const SlotModel& child = s.downstream[j];
          RDMANET_ASSIGN_OR_RETURN(int sec, allocBus());
          const std::string down_dir =
              addPort(up_dir, at(domain_, internal, static_cast<int>(j) << 3),
                      BridgeKind::kSwitchDownstream, sec, sec + extraBuses(child),
                      child.acs_redirect || s.switch_acs_redirect);
          RDMANET_RETURN_IF_ERROR(placeSlot(child, down_dir, sec));
        }
        return okStatus();
      }
    }
    return okStatus();
  }

  // A netdev (and RDMA device) for a function whose driver makes one.
  Status addNetdevAndRdma(const NicModel& m, const PciAddress& fn, const std::string& name,
                          const std::string& mac, bool is_vf, bool rdma) {
    if (!isValidIfName(name)) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("netdev name \"{}\" is not a valid interface name (<= 15 bytes)", name));
    }
    BuiltNetdev nd{.name = name,
                   .pci = fn,
                   .is_vf = is_vf,
                   .mac = mac,
                   .ifindex = next_ifindex_++,
                   .mtu = m.mtu};
    t_.addNetdev(fn, NetdevSpec{.name = name,
                                .ifindex = nd.ifindex,
                                .mac = mac,
                                .mtu = m.mtu,
                                .speed_mbps = m.speed_mbps,
                                .type = m.link_layer == "InfiniBand" ? 32 : 1});
    if (rdma && m.rdma_kind == "rxe") {
      addRxe(m, name, mac, nd);
      // Its upper (macvlan on a PF, ipvlan on a VF) carries one too: a netdev of no PCI
      // function, so its RDMA device belongs to none either.
      const std::string upper = name + (is_vf ? "i" : "m");
      if (!isValidIfName(upper)) {
        return makeError(ErrorCode::kInvalidConfig,
                         fmt::format("upper netdev name \"{}\" is over 15 bytes", upper));
      }
      t_.addVirtualNetdev(NetdevSpec{.name = upper, .ifindex = next_ifindex_++, .mac = mac});
      BuiltNetdev unused;
      addRxe(m, upper, mac, unused);
    } else if (rdma) {
      const int n = next_rdma_++;
      const std::string dev = fmt::format("mlx5_{}", n);
      RdmaPortSpec port{.link_layer = m.link_layer};
      port.gids = {
          GidSpec{.index = 0, .gid = linkLocalGid(mac), .type = "IB/RoCE v1", .ndev = name},
          GidSpec{.index = 1, .gid = linkLocalGid(mac), .type = "RoCE v2", .ndev = name}};
      t_.addRdmaDevice(
          fn,
          RdmaSpec{
              .name = dev, .node_guid = guidFromMac(mac), .ports = {port}, .uverbs = n, .umad = n});
      const std::string at = is_vf ? m.vf_rdma_at : "class";
      if (at != "class") t_.remove("/sys/class/infiniband/" + dev);
      if (at == "other-netns") {
        // In a pod's netns the host sees neither entry; the char devices stay.
        t_.remove(t_.dirOf(fn) + "/infiniband/" + dev);
      } else {
        nd.rdma = dev;
        out_.rdma_devices.push_back(dev);
      }
    }
    out_.netdevs.push_back(std::move(nd));
    return okStatus();
  }

  // A Soft-RoCE device on netdev `name`, with its uverbs node; `nd` records it.
  void addRxe(const NicModel& m, const std::string& name, const std::string& mac, BuiltNetdev& nd) {
    const int n = next_rdma_++;
    nd.rdma = fmt::format("rxe{}", n);
    RdmaPortSpec port{.link_layer = m.link_layer};
    port.gids = {GidSpec{.index = 1, .gid = linkLocalGid(mac), .type = "RoCE v2", .ndev = name}};
    t_.addSoftRdma(
        RdmaSpec{.name = nd.rdma, .node_guid = guidFromMac(mac), .ports = {port}, .uverbs = n},
        name);
    out_.rdma_devices.push_back(nd.rdma);
  }

  static bool makesNetdev(const std::string& driver) {
    return !driver.empty() && driver != "vfio-pci";
  }

  std::string mac(int pf, int vf) const {
    return fmt::format("02:{:02x}:{:02x}:{:02x}:{:02x}:00", prefix_hash_, nic_index_ & 0xff, pf,
                       (vf + 1) & 0xff);
  }

  Status placeNic(const NicModel& m, const std::string& parent, int bus) {
    BuiltNic nic{.name = m.name, .numa_node = numa_};
    const std::string base = topo_.ifprefix + m.name;
    for (int i = 0; i < m.ports; ++i) {
      const auto pf = at(domain_, bus, i);
      t_.addFunction(parent, FunctionSpec{.address = pf,
                                          .vendor = m.vendor,
                                          .device = m.pf_device,
                                          .class_code = m.class_code,
                                          .driver = m.driver,
                                          .numa_node = numa_,
                                          .iommu_group = next_iommu_++,
                                          .sriov_totalvfs = m.total_vfs,
                                          .sriov_numvfs = m.vfs_per_port,
                                          .sriov_vf_device = m.vf_device});
      nic.pfs.push_back(pf);
      if (makesNetdev(m.driver)) {
        RDMANET_RETURN_IF_ERROR(
            addNetdevAndRdma(m, pf, fmt::format("{}f{}", base, i), mac(i, -1), false, m.rdma));
      }
    }
    for (int i = 0; i < m.ports; ++i) {
      nic.vfs.emplace_back();
      for (int j = 0; j < m.vfs_per_port; ++j) {
        const auto vf = at(domain_, bus, m.ports + i * m.vfs_per_port + j);
        t_.addFunction(parent, FunctionSpec{.address = vf,
                                            .vendor = m.vendor,
                                            .device = m.vf_device,
                                            .class_code = m.class_code,
                                            .driver = m.vf_driver,
                                            .numa_node = numa_,
                                            .iommu_group = next_iommu_++});
        t_.linkVf(nic.pfs[i], vf, j);
        nic.vfs.back().push_back(vf);
        if (makesNetdev(m.vf_driver)) {
          RDMANET_RETURN_IF_ERROR(addNetdevAndRdma(m, vf, fmt::format("{}f{}v{}", base, i, j),
                                                   mac(i, j), true, m.rdma && m.vf_rdma));
        }
      }
    }
    out_.nics.push_back(std::move(nic));
    ++nic_index_;
    return okStatus();
  }

  const Topology& topo_;
  SimTree& t_;
  BuiltNode out_;
  uint16_t domain_ = 0;
  int numa_ = -1;
  int next_bus_ = 1;
  int next_ifindex_ = kFirstIfindex;
  int next_rdma_ = 0;
  int next_iommu_ = 1;
  int nic_index_ = 0;
  uint8_t prefix_hash_ = 0;
};

}  // namespace

std::string guidFromMac(const std::string& mac) {
  const auto b = macBytes(mac);
  return fmt::format("{:02x}{:02x}:{:02x}ff:fe{:02x}:{:02x}{:02x}", b[0] ^ 2, b[1], b[2], b[3],
                     b[4], b[5]);
}

std::string linkLocalGid(const std::string& mac) {
  return "fe80:0000:0000:0000:" + guidFromMac(mac);
}

Result<BuiltNode> buildNode(const Topology& topo, SimTree& tree) {
  return Builder(topo, tree).run();
}

void setNetdevIdentity(SimTree& tree, const BuiltNetdev& nd, int ifindex, const std::string& mac) {
  const std::string dir = "/sys/class/net/" + nd.name;
  tree.writeAttr(dir + "/ifindex", std::to_string(ifindex));
  tree.writeAttr(dir + "/address", mac);
  if (nd.rdma.empty()) return;
  // Where the device sits: under its function, or (Soft-RoCE) under devices/virtual; the class
  // link may be missing.
  std::string ib = fmt::format("/sys/bus/pci/devices/{}/infiniband/{}", nd.pci.str(), nd.rdma);
  if (!std::filesystem::exists(tree.host(ib))) ib = "/sys/devices/virtual/infiniband/" + nd.rdma;
  tree.writeAttr(ib + "/node_guid", guidFromMac(mac));
  tree.writeAttr(ib + "/ports/1/gids/0", linkLocalGid(mac));
  tree.writeAttr(ib + "/ports/1/gids/1", linkLocalGid(mac));
}

}  // namespace rdmanet::sim
