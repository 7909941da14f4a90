#include "deviceplugin/podnet/pod_devices.h"

#include <map>
#include <optional>

namespace rdmanet::podnet {
namespace {

// The first RDMA device under a PCI function's sysfs directory (mlx5 makes one per function).
std::string rdmaUnder(const Sysfs& sysfs, const std::string& pci_dir) {
  const auto names = sysfs.list(pci_dir + "/infiniband");
  return names.empty() ? std::string() : names.front();
}

// The PCI address a netdev's `device` link names ("" for a virtual netdev).
std::string pciOfNetdev(const Sysfs& sysfs, const std::string& netdev) {
  if (netdev.empty()) return {};
  auto name = sysfs.linkName("/sys/class/net/" + netdev + "/device");
  return name.value_or(std::string());
}

// Soft-RoCE devices by the netdev they sit on (their `parent` file), read once per resolve and
// only when a hardware lookup failed: software devices have no PCI function to look under.
class SoftRdma {
 public:
  explicit SoftRdma(const Sysfs& sysfs) : sysfs_(sysfs) {}
  std::string onNetdev(const std::string& netdev) {
    if (!by_parent_) {
      by_parent_.emplace();
      for (const auto& dev : sysfs_.list("/sys/class/infiniband")) {
        if (auto parent = sysfs_.readOpt("/sys/class/infiniband/" + dev + "/parent")) {
          by_parent_->emplace(*parent, dev);
        }
      }
    }
    auto it = by_parent_->find(netdev);
    return it == by_parent_->end() ? std::string() : it->second;
  }

 private:
  const Sysfs& sysfs_;
  std::optional<std::map<std::string, std::string>> by_parent_;
};

}  // namespace

std::vector<PodDevice> resolvePodDevices(const Sysfs& sysfs,
                                         const std::vector<PodAttachment>& attachments) {
  std::vector<PodDevice> out;
  out.reserve(attachments.size());
  SoftRdma soft(sysfs);
  struct Master {
    std::string pci, rdma;
  };
  std::map<std::string, Master> masters;
  for (const auto& a : attachments) {
    PodDevice d{.att = a};
    if (a.mode == "sriov") {
      d.port_netdev = a.pf_name;
      d.port_pci = a.pf_pci;
    } else if (a.mode == "host-device") {
      d.port_netdev = a.host_netdev;
      d.port_pci = a.pci;
      d.port_ifname_in_pod = a.pod_lower.empty() ? a.ifname : a.pod_lower;
    } else {  // macvlan: many pods share a master, resolved once per master
      auto [it, fresh] = masters.try_emplace(a.host_netdev);
      if (fresh) {
        it->second.pci = pciOfNetdev(sysfs, a.host_netdev);
        if (!it->second.pci.empty()) {
          it->second.rdma = rdmaUnder(sysfs, "/sys/bus/pci/devices/" + it->second.pci);
        }
        if (it->second.rdma.empty()) it->second.rdma = soft.onNetdev(a.host_netdev);
      }
      d.port_netdev = a.host_netdev;
      d.port_pci = it->second.pci;
      d.rdma_device = it->second.rdma;
    }
    if (!a.rdma_in_pod.empty()) {
      d.rdma_device = a.rdma_in_pod.front();
      d.rdma_in_pod_netns = true;
    } else if (a.mode != "macvlan" && !a.pci.empty()) {
      d.rdma_device = rdmaUnder(sysfs, "/sys/bus/pci/devices/" + a.pci);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace rdmanet::podnet
