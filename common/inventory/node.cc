#include "common/inventory/node.h"

#include <algorithm>
#include <map>
#include <set>

namespace rdmanet {

const NicFunction* NodeInventory::nic(const PciAddress& a) const {
  // nics is sorted by address (scanNode and rescanPf keep it so): a binary search, since pool
  // building and health look up every VF's PF.
  auto it =
      std::lower_bound(nics.begin(), nics.end(), a,
                       [](const NicFunction& n, const PciAddress& x) { return n.pci.address < x; });
  return it != nics.end() && it->pci.address == a ? &*it : nullptr;
}

bool isGpu(const PciFunction& f) { return f.vendor == "10de" && (f.class_code >> 16) == 0x03; }

namespace {

void sortByName(std::vector<RdmaDevice>& devs) {
  std::sort(devs.begin(), devs.end(),
            [](const RdmaDevice& a, const RdmaDevice& b) { return a.name < b.name; });
}

// The RDMA devices of one function from the node-wide grouping. A hardware device under the
// function that the class listing lacks (missing from /sys/class/infiniband, or a tree without
// class links) is read where it sits: the function's own devices are re-read, never the node's.
std::vector<RdmaDevice> rdmaOf(const Sysfs& sysfs, RdmaReader& reader, const PciAddress& addr,
                               std::map<PciAddress, std::vector<RdmaDevice>>& by_fn) {
  std::vector<RdmaDevice> devs;
  if (auto it = by_fn.find(addr); it != by_fn.end()) devs = std::move(it->second);
  for (const auto& name : sysfs.list("/sys/bus/pci/devices/" + addr.str() + "/infiniband")) {
    const bool known =
        std::any_of(devs.begin(), devs.end(), [&](const RdmaDevice& d) { return d.name == name; });
    if (known) continue;
    std::erase_if(devs, [](const RdmaDevice& d) { return !d.is_software; });
    for (RdmaDevice& d : reader.under(addr)) devs.push_back(std::move(d));
    sortByName(devs);
    break;
  }
  return devs;
}

// Closest GPU of one NIC function; nothing when the node has no GPUs.
void placeNearGpus(const NicFunction& n, const std::vector<GpuFunction>& gpus,
                   std::map<PciAddress, Distance>& nearest) {
  for (const auto& g : gpus) {
    const Distance d = classifyDistance(n.placement, g.placement);
    auto [it, inserted] = nearest.emplace(n.pci.address, d);
    if (!inserted && d < it->second) it->second = d;
  }
}

// Sorts functions into NICs and GPUs; the rest (bridges, storage, ...) are dropped.
void addFunctions(const Sysfs& sysfs, RdmaReader& reader, std::vector<PciFunction> fns,
                  std::map<PciAddress, std::vector<RdmaDevice>>& rdma_by_fn, NodeInventory& inv,
                  std::vector<NicFunction>& nics) {
  for (PciFunction& fn : fns) {
    const bool nic = fn.isNetwork();
    if (!nic && !isGpu(fn)) continue;
    // The place comes from the canonical directory read with the function: no second readlink.
    PciePlacement placement = placementOf(fn);
    const PciAddress addr = fn.address;
    if (nic) {
      nics.push_back(NicFunction{.pci = std::move(fn),
                                 .placement = std::move(placement),
                                 .netdevs = netdevsOf(sysfs, addr),
                                 .rdma = rdmaOf(sysfs, reader, addr, rdma_by_fn)});
    } else {
      inv.gpus.push_back(GpuFunction{.pci = std::move(fn), .placement = std::move(placement)});
    }
  }
}

}  // namespace

NodeInventory scanNode(const Sysfs& sysfs, const ScanOptions& opts) {
  NodeInventory inv;
  RdmaReader reader(sysfs, {.gids = opts.gids});  // one pass: shared reads happen once
  std::vector<PciAddress> addrs = listPciFunctions(sysfs);
  if (opts.vfs) {
    auto rdma_by_fn = reader.byFunction();
    addFunctions(sysfs, reader, readPciFunctions(sysfs, std::move(addrs)), rdma_by_fn, inv,
                 inv.nics);
  } else {
    // One stat per VF to leave it out; the PFs' hardware RDMA devices are found under them and
    // the class directory is only read for software devices.
    std::erase_if(addrs, [&](const PciAddress& a) {
      return sysfs.exists("/sys/bus/pci/devices/" + a.str() + "/physfn");
    });
    std::vector<PciFunction> fns = readPciFunctions(sysfs, std::move(addrs));
    std::set<PciAddress> nics;
    for (const PciFunction& fn : fns) {
      if (fn.isNetwork()) nics.insert(fn.address);
    }
    auto rdma_by_fn =
        reader.softwareByFunction([&](const PciAddress& a) { return nics.contains(a); });
    for (const PciFunction& fn : fns) {
      if (!fn.isNetwork()) continue;
      std::vector<RdmaDevice>& devs = rdma_by_fn[fn.address];
      for (RdmaDevice& d : reader.under(fn.address)) devs.push_back(std::move(d));
      sortByName(devs);
    }
    addFunctions(sysfs, reader, std::move(fns), rdma_by_fn, inv, inv.nics);
  }
  for (const auto& n : inv.nics) placeNearGpus(n, inv.gpus, inv.nearest_gpu);
  return inv;
}

std::vector<PciAddress> rescanPf(const Sysfs& sysfs, const PciAddress& pf, NodeInventory& inv,
                                 const ScanOptions& opts) {
  RdmaReader reader(sysfs, {.gids = opts.gids});  // one pass: shared reads happen once
  // What the inventory had of this PF (it, its VFs then) and what the PF links to now.
  std::set<PciAddress> old{pf};
  for (const NicFunction& n : inv.nics) {
    if (n.pci.pf == pf) old.insert(n.pci.address);
  }
  // The PF is read twice (for its links, then with its VFs, which gives their indexes): O(VFs).
  std::vector<PciFunction> fns;
  for (const PciFunction& p : readPciFunctions(sysfs, {pf})) {
    std::vector<PciAddress> addrs{pf};
    addrs.insert(addrs.end(), p.vfs.begin(), p.vfs.end());
    fns = readPciFunctions(sysfs, std::move(addrs));
  }

  // RDMA devices: hardware ones sit under their function; software ones (rxe, siw) are kept
  // by name from the last scan and re-read, as their own uevent brings a full rescan anyway.
  std::map<PciAddress, std::vector<RdmaDevice>> rdma_by_fn;
  for (const PciFunction& fn : fns) {
    std::vector<RdmaDevice>& devs = rdma_by_fn[fn.address];
    devs = reader.under(fn.address);
    if (const NicFunction* was = inv.nic(fn.address)) {
      for (const RdmaDevice& d : was->rdma) {
        if (!d.is_software) continue;
        if (auto now = reader.read(d.name); now.ok() && now->pci == fn.address) {
          devs.push_back(std::move(now).value());
        }
      }
    }
    sortByName(devs);
  }

  std::vector<NicFunction> fresh;
  NodeInventory scratch;  // GPUs among them (none expected under a PF) are ignored
  addFunctions(sysfs, reader, std::move(fns), rdma_by_fn, scratch, fresh);
  std::erase_if(inv.nics, [&](const NicFunction& n) { return old.contains(n.pci.address); });
  for (const PciAddress& a : old) inv.nearest_gpu.erase(a);
  std::vector<PciAddress> reread;
  for (NicFunction& n : fresh) {
    inv.nearest_gpu.erase(n.pci.address);
    placeNearGpus(n, inv.gpus, inv.nearest_gpu);
    reread.push_back(n.pci.address);
    auto at = std::lower_bound(
        inv.nics.begin(), inv.nics.end(), n.pci.address,
        [](const NicFunction& x, const PciAddress& a) { return x.pci.address < a; });
    if (at != inv.nics.end() && at->pci.address == n.pci.address) {
      *at = std::move(n);  // a VF that moved to this PF since the last scan
    } else {
      inv.nics.insert(at, std::move(n));
    }
  }
  return reread;
}

std::optional<PciAddress> pfOf(const Sysfs& sysfs, const NodeInventory& inv, const PciAddress& fn) {
  if (const NicFunction* n = inv.nic(fn)) return n->pci.pf.value_or(fn);
  auto f = readPciFunction(sysfs, fn);
  if (!f.ok() || !f->isNetwork()) return std::nullopt;
  return f->pf.value_or(fn);
}

}  // namespace rdmanet
