#include "tests/simnode/sim_tree.h"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>
#include <system_error>

#include "common/base/sysfs.h"

namespace fs = std::filesystem;

namespace rdmanet::sim {
namespace {

constexpr int kUverbsMinorBase = 192;  // IB_UVERBS_BASE_MINOR
constexpr int kIssmMinorBase = 64;     // umad minors 0..63, issm 64..127 (IB_UMAD_MAX_PORTS)
constexpr int kIbMajor = 231;          // IB_UVERBS_MAJOR / IB_UMAD_MAJOR

std::string hexAttr(const std::string& id) { return "0x" + id; }

std::string portState(bool active) { return active ? "4: ACTIVE" : "1: DOWN"; }
std::string physState(bool active) { return active ? "5: LinkUp" : "3: Disabled"; }

}  // namespace

PciAddress pci(std::string_view bdf) {
  auto a = PciAddress::parse(bdf);
  if (!a.ok()) throw std::invalid_argument(a.error().msg);
  return *a;
}

SimTree::SimTree(fs::path root) : root_(std::move(root)) {
  for (const char* d :
       {"/sys/bus/pci/devices", "/sys/bus/pci/drivers", "/sys/class/net", "/sys/class/infiniband",
        "/sys/class/infiniband_verbs", "/sys/class/infiniband_mad", "/sys/class/misc",
        "/sys/devices/virtual/net", "/sys/kernel/iommu_groups"}) {
    mkdirs(d);
  }
}

fs::path SimTree::host(std::string_view abs) const { return Sysfs(root_).path(abs); }

void SimTree::mkdirs(const std::string& abs) { fs::create_directories(host(abs)); }

void SimTree::writeAttr(const std::string& abs, const std::string& value) {
  fs::create_directories(host(abs).parent_path());
  std::ofstream out(host(abs), std::ios::trunc);
  out << value << "\n";
  if (!out) throw std::runtime_error("cannot write " + host(abs).string());
}

void SimTree::remove(const std::string& abs) {
  std::error_code ec;
  fs::remove_all(host(abs), ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw fs::filesystem_error("remove", ec);
}

void SimTree::symlink(const std::string& link_abs, const std::string& target_abs) {
  const fs::path link(link_abs);
  fs::path rel = fs::path(target_abs).lexically_relative(link.parent_path());
  // The kernel names the target even when it is an ancestor ("device -> ../../../0000:81:00.0",
  // not "../.."), and readers take the link's last component as the name.
  if (rel.empty() || rel == "." || rel.filename() == "..") {
    rel = rel / ".." / fs::path(target_abs).filename();
    rel = rel.lexically_normal();
  }
  mkdirs(link.parent_path().generic_string());
  remove(link_abs);
  fs::create_symlink(rel, host(link_abs));
}

std::string SimTree::dirOf(const PciAddress& fn) const {
  auto dir = Sysfs(root_).resolveLink("/sys/bus/pci/devices/" + fn.str());
  if (!dir) throw std::runtime_error("no PCI function " + fn.str() + " in the sim tree");
  return *dir;
}

std::string SimTree::addHostBridge(uint16_t domain, uint8_t bus) {
  const std::string dir = fmt::format("/sys/devices/pci{:04x}:{:02x}", domain, bus);
  mkdirs(dir);
  return dir;
}

std::string SimTree::addBridge(const std::string& parent_dir, const BridgeSpec& spec) {
  const std::string dir = parent_dir + "/" + spec.address.str();
  mkdirs(dir);
  writeAttr(dir + "/vendor", hexAttr(spec.vendor));
  writeAttr(dir + "/device", hexAttr(spec.device));
  writeAttr(dir + "/class", "0x060400");
  if (spec.numa_node) writeAttr(dir + "/numa_node", std::to_string(*spec.numa_node));
  const auto cfg = bridgeConfigSpace(spec);
  std::ofstream out(host(dir + "/config"), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(cfg.data()), static_cast<std::streamsize>(cfg.size()));
  symlink(dir + "/driver", "/sys/bus/pci/drivers/pcieport");
  symlink("/sys/bus/pci/drivers/pcieport/" + spec.address.str(), dir);
  symlink("/sys/bus/pci/devices/" + spec.address.str(), dir);
  return dir;
}

std::string SimTree::addFunction(const std::string& parent_dir, const FunctionSpec& spec) {
  const std::string dir = parent_dir + "/" + spec.address.str();
  mkdirs(dir);
  writeAttr(dir + "/vendor", hexAttr(spec.vendor));
  writeAttr(dir + "/device", hexAttr(spec.device));
  writeAttr(dir + "/class", fmt::format("0x{:06x}", spec.class_code));
  if (spec.numa_node) writeAttr(dir + "/numa_node", std::to_string(*spec.numa_node));
  if (spec.iommu_group) {
    const std::string group = fmt::format("/sys/kernel/iommu_groups/{}", *spec.iommu_group);
    symlink(group + "/devices/" + spec.address.str(), dir);
    symlink(dir + "/iommu_group", group);
  }
  if (spec.sriov_totalvfs > 0) {
    writeAttr(dir + "/sriov_totalvfs", std::to_string(spec.sriov_totalvfs));
    writeAttr(dir + "/sriov_numvfs", std::to_string(spec.sriov_numvfs));
    writeAttr(dir + "/sriov_offset", "2");
    writeAttr(dir + "/sriov_stride", "1");
    writeAttr(dir + "/sriov_vf_device", spec.sriov_vf_device);
  }
  symlink("/sys/bus/pci/devices/" + spec.address.str(), dir);
  if (!spec.driver.empty()) bindDriver(spec.address, spec.driver);
  return dir;
}

void SimTree::linkVf(const PciAddress& pf, const PciAddress& vf, int index) {
  const std::string pf_dir = dirOf(pf);
  const std::string vf_dir = dirOf(vf);
  symlink(fmt::format("{}/virtfn{}", pf_dir, index), vf_dir);
  symlink(vf_dir + "/physfn", pf_dir);
  // The kernel's First VF Offset: VF 0's routing ID minus the PF's (stride stays 1).
  if (index == 0 && fs::exists(host(pf_dir + "/sriov_offset"))) {
    auto rid = [](const PciAddress& a) { return a.bus << 8 | a.device << 3 | a.function; };
    writeAttr(pf_dir + "/sriov_offset", std::to_string(rid(vf) - rid(pf)));
  }
}

void SimTree::bindDriver(const PciAddress& fn, const std::string& driver) {
  const std::string dir = dirOf(fn);
  Sysfs sysfs(root_);
  if (auto old = sysfs.linkName(dir + "/driver")) {
    remove(fmt::format("/sys/bus/pci/drivers/{}/{}", *old, fn.str()));
    remove(dir + "/driver");
    // A driver change takes the function's netdevs and RDMA devices with it.
    for (const auto& n : sysfs.list(dir + "/net")) removeNetdev(n);
    for (const auto& [sub, cls] :
         {std::pair{"infiniband", "infiniband"}, std::pair{"infiniband_verbs", "infiniband_verbs"},
          std::pair{"infiniband_mad", "infiniband_mad"}}) {
      for (const auto& n : sysfs.list(fmt::format("{}/{}", dir, sub))) {
        remove(fmt::format("/sys/class/{}/{}", cls, n));
      }
      remove(fmt::format("{}/{}", dir, sub));
    }
  }
  if (driver.empty()) return;
  symlink(fmt::format("/sys/bus/pci/drivers/{}/{}", driver, fn.str()), dir);
  symlink(dir + "/driver", "/sys/bus/pci/drivers/" + driver);
}

std::string SimTree::addNetdev(const PciAddress& fn, const NetdevSpec& spec) {
  const std::string fn_dir = dirOf(fn);
  const std::string dir = fmt::format("{}/net/{}", fn_dir, spec.name);
  mkdirs(dir);
  writeAttr(dir + "/ifindex", std::to_string(spec.ifindex));
  writeAttr(dir + "/iflink", std::to_string(spec.iflink != 0 ? spec.iflink : spec.ifindex));
  writeAttr(dir + "/address", spec.mac);
  writeAttr(dir + "/mtu", std::to_string(spec.mtu));
  writeAttr(dir + "/operstate", spec.operstate);
  writeAttr(dir + "/carrier", spec.operstate == "up" ? "1" : "0");
  writeAttr(dir + "/speed", std::to_string(spec.speed_mbps.value_or(-1)));
  writeAttr(dir + "/type", std::to_string(spec.type));
  symlink(dir + "/device", fn_dir);
  symlink("/sys/class/net/" + spec.name, dir);
  return dir;
}

std::string SimTree::addVirtualNetdev(const NetdevSpec& spec) {
  const std::string dir = "/sys/devices/virtual/net/" + spec.name;
  mkdirs(dir);
  writeAttr(dir + "/ifindex", std::to_string(spec.ifindex));
  writeAttr(dir + "/iflink", std::to_string(spec.iflink != 0 ? spec.iflink : spec.ifindex));
  writeAttr(dir + "/address", spec.mac);
  writeAttr(dir + "/mtu", std::to_string(spec.mtu));
  writeAttr(dir + "/operstate", spec.operstate);
  writeAttr(dir + "/carrier", spec.operstate == "up" ? "1" : "0");
  writeAttr(dir + "/speed", std::to_string(spec.speed_mbps.value_or(-1)));
  writeAttr(dir + "/type", std::to_string(spec.type));
  symlink("/sys/class/net/" + spec.name, dir);
  return dir;
}

void SimTree::removeNetdev(const std::string& name) {
  Sysfs sysfs(root_);
  if (auto dir = sysfs.resolveLink("/sys/class/net/" + name)) remove(*dir);
  remove("/sys/class/net/" + name);
}

void SimTree::setNetdevUp(const std::string& name, bool up) {
  const std::string dir = "/sys/class/net/" + name;
  if (!fs::exists(host(dir))) throw std::runtime_error("no netdev " + name + " in the sim tree");
  writeAttr(dir + "/operstate", up ? "up" : "down");
  writeAttr(dir + "/carrier", up ? "1" : "0");
}

void SimTree::setRdmaPortActive(const std::string& dev, int port, bool active) {
  const std::string dir = fmt::format("/sys/class/infiniband/{}/ports/{}", dev, port);
  if (!fs::exists(host(dir))) throw std::runtime_error("no RDMA port " + dir + " in the sim tree");
  writeAttr(dir + "/state", portState(active));
  writeAttr(dir + "/phys_state", physState(active));
}

void SimTree::writeCharDev(const std::string& parent, const std::string& sub,
                           const std::string& cls, const std::string& name,
                           const std::string& ibdev, int major, int minor,
                           std::optional<int> port) {
  const std::string dir = fmt::format("{}/{}/{}", parent, sub, name);
  writeAttr(dir + "/ibdev", ibdev);
  writeAttr(dir + "/dev", fmt::format("{}:{}", major, minor));
  if (port) writeAttr(dir + "/port", std::to_string(*port));
  symlink(fmt::format("/sys/class/{}/{}", cls, name), dir);
}

namespace {

void writeRdmaBody(SimTree& t, const std::string& dir, const RdmaSpec& spec) {
  t.writeAttr(dir + "/node_guid", spec.node_guid);
  t.writeAttr(dir + "/node_type", "1: CA");
  for (size_t i = 0; i < spec.ports.size(); ++i) {
    const RdmaPortSpec& p = spec.ports[i];
    const std::string pd = fmt::format("{}/ports/{}", dir, i + 1);
    t.writeAttr(pd + "/state", portState(p.active));
    t.writeAttr(pd + "/phys_state", physState(p.active));
    t.writeAttr(pd + "/link_layer", p.link_layer);
    for (int g = 0; g < p.gid_table_size; ++g) {
      t.writeAttr(fmt::format("{}/gids/{}", pd, g), "0000:0000:0000:0000:0000:0000:0000:0000");
    }
    for (const auto& g : p.gids) {
      t.writeAttr(fmt::format("{}/gids/{}", pd, g.index), g.gid);
      t.writeAttr(fmt::format("{}/gid_attrs/types/{}", pd, g.index), g.type);
      t.writeAttr(fmt::format("{}/gid_attrs/ndevs/{}", pd, g.index), g.ndev);
    }
  }
  // rdma_cm is one misc device for the whole node.
  t.writeAttr("/sys/devices/virtual/misc/rdma_cm/dev", "10:58");
  t.symlink("/sys/class/misc/rdma_cm", "/sys/devices/virtual/misc/rdma_cm");
  t.writeAttr("/sys/class/infiniband_verbs/abi_version", "6");
  t.writeAttr("/sys/class/infiniband_mad/abi_version", "5");
}

}  // namespace

std::string SimTree::addRdmaDevice(const PciAddress& fn, const RdmaSpec& spec) {
  const std::string fn_dir = dirOf(fn);
  const std::string dir = fmt::format("{}/infiniband/{}", fn_dir, spec.name);
  mkdirs(dir);
  writeRdmaBody(*this, dir, spec);
  // mlx5 port counters (IB PMA counters/ and RoCE hw_counters/), all zero, as after a driver
  // load; the node doctor reads them and tests raise them with writeAttr.
  for (size_t i = 0; i < spec.ports.size(); ++i) {
    const std::string pd = fmt::format("{}/ports/{}", dir, i + 1);
    for (const char* c :
         {"excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
          "local_link_integrity_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
          "port_rcv_remote_physical_errors", "port_xmit_data", "port_xmit_discards",
          "port_xmit_packets", "port_xmit_wait", "symbol_error"}) {
      writeAttr(fmt::format("{}/counters/{}", pd, c), "0");
    }
    for (const char* c :
         {"duplicate_request", "implied_nak_seq_err", "local_ack_timeout_err", "np_cnp_sent",
          "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err",
          "rnr_nak_retry_err", "roce_adp_retrans", "roce_adp_retrans_to", "rp_cnp_handled",
          "rp_cnp_ignored"}) {
      writeAttr(fmt::format("{}/hw_counters/{}", pd, c), "0");
    }
  }
  symlink(dir + "/device", fn_dir);
  symlink("/sys/class/infiniband/" + spec.name, dir);
  if (spec.uverbs) {
    writeCharDev(fn_dir, "infiniband_verbs", "infiniband_verbs",
                 fmt::format("uverbs{}", *spec.uverbs), spec.name, kIbMajor,
                 kUverbsMinorBase + *spec.uverbs, std::nullopt);
  }
  if (spec.umad) {
    writeCharDev(fn_dir, "infiniband_mad", "infiniband_mad", fmt::format("umad{}", *spec.umad),
                 spec.name, kIbMajor, *spec.umad, 1);
    writeCharDev(fn_dir, "infiniband_mad", "infiniband_mad", fmt::format("issm{}", *spec.umad),
                 spec.name, kIbMajor, kIssmMinorBase + *spec.umad, 1);
  }
  return dir;
}

std::string SimTree::addSoftRdma(const RdmaSpec& spec, const std::string& parent_netdev) {
  const std::string dir = "/sys/devices/virtual/infiniband/" + spec.name;
  mkdirs(dir);
  writeRdmaBody(*this, dir, spec);
  writeAttr(dir + "/parent", parent_netdev);
  symlink("/sys/class/infiniband/" + spec.name, dir);
  if (spec.uverbs) {
    writeCharDev("/sys/devices/virtual", "infiniband_verbs", "infiniband_verbs",
                 fmt::format("uverbs{}", *spec.uverbs), spec.name, kIbMajor,
                 kUverbsMinorBase + *spec.uverbs, std::nullopt);
  }
  return dir;
}

}  // namespace rdmanet::sim
