#include "deviceplugin/podnet/pod_devices.h"

#include <algorithm>
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
// only when needed: software devices have no PCI function to look under. They are the kernel's
// virtual infiniband devices, so hardware ones (a thousand VFs' mlx5 devices) cost nothing here.
class SoftRdma {
 public:
  explicit SoftRdma(const Sysfs& sysfs) : sysfs_(sysfs) {}
  std::string onNetdev(const std::string& netdev) {
    load();
    auto it = by_parent_->find(netdev);
    return it == by_parent_->end() ? std::string() : it->second;
  }
  // The Soft-RoCE device whose netdev is an upper, in the host's netns, of a device in another
  // netns with ifindex `lower` there (the first by its netdev's name); "" if none.
  std::string onUpperOf(int lower) {
    load();
    if (!by_foreign_lower_) {
      by_foreign_lower_.emplace();
      for (const auto& [parent, dev] : *by_parent_) {
        const std::string dir = "/sys/class/net/" + parent;
        const auto ifindex = sysfs_.readInt(dir + "/ifindex");
        const auto iflink = sysfs_.readInt(dir + "/iflink");
        if (!ifindex || !iflink || *iflink <= 0 || *iflink == *ifindex) continue;
        // A lower in this netns has a lower_<name> link: that is a host device's upper, not a
        // pod's.
        const auto entries = sysfs_.list(dir);
        if (std::any_of(entries.begin(), entries.end(),
                        [](const std::string& e) { return e.starts_with("lower_"); })) {
          continue;
        }
        by_foreign_lower_->emplace(static_cast<int>(*iflink), dev);  // the first name wins
      }
    }
    auto it = by_foreign_lower_->find(lower);
    return it == by_foreign_lower_->end() ? std::string() : it->second;
  }

 private:
  void load() {
    if (by_parent_) return;
    by_parent_.emplace();
    for (const auto& dev : sysfs_.list("/sys/devices/virtual/infiniband")) {
      if (auto parent = sysfs_.readOpt("/sys/devices/virtual/infiniband/" + dev + "/parent")) {
        by_parent_->emplace(*parent, dev);
      }
    }
  }

  const Sysfs& sysfs_;
  std::optional<std::map<std::string, std::string>> by_parent_;  // netdev -> device
  std::optional<std::map<int, std::string>> by_foreign_lower_;   // lower's ifindex -> device
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
  std::map<int, int> ifindex_uses;  // pod ifindex -> how many attachments record it
  for (const auto& a : attachments) {
    if (a.pod_ifindex > 0) ++ifindex_uses[a.pod_ifindex];
  }
  // The Soft-RoCE device on an upper of the pod's interface, if one (and only this attachment)
  // can be matched to it.
  auto ownSoft = [&](const PodAttachment& a) {
    if (a.pod_ifindex <= 0 || ifindex_uses[a.pod_ifindex] != 1) return std::string();
    return soft.onUpperOf(a.pod_ifindex);
  };
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
    } else if (std::string own = ownSoft(a); !own.empty()) {
      d.rdma_device = std::move(own);
    } else if (a.mode != "macvlan" && !a.pci.empty()) {
      d.rdma_device = rdmaUnder(sysfs, "/sys/bus/pci/devices/" + a.pci);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace rdmanet::podnet
