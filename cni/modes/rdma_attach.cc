#include "cni/modes/rdma_attach.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "cni/state/state_store.h"
#include "common/inventory/rdma.h"
#include "common/json/json_dump.h"
#include "common/os/atomic_file.h"

namespace rdmanet::cni {
namespace {

std::string mappedGid(const IpAddress& ip) {
  const auto& b = ip.bytes;
  return fmt::format("0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}", b[0], b[1], b[2],
                     b[3]);
}

}  // namespace

std::vector<std::string> rdmaDevicesFor(const PluginDeps& deps, const NetConf& conf,
                                        const ResolvedDevice& dev) {
  std::vector<std::string> out;
  if (!dev.pci) return out;
  // macvlan shares the PF's HCA (rdma/shared): report it, never move it. Only hardware devices
  // count, and they sit under the function: reading them there costs the same on any node,
  // where looking for software ones would read every RDMA device the node has.
  for (const auto& d : rdmaDevicesUnder(deps.sysfs, *dev.pci, {.gids = false})) {
    out.push_back(d.name);
  }
  (void)conf;
  return out;
}

Status moveRdmaIntoPod(PluginDeps& deps, const std::vector<std::string>& devs, int pod_fd,
                       AttachmentState& st) {
  if (devs.empty()) return okStatus();
  auto mode = deps.host.rdmaNetnsMode();
  if (!mode.ok()) {
    deps.log.warn("cannot read the RDMA netns mode ({}); leaving {} in place", mode.error().msg,
                  fmt::join(devs, ","));
    return okStatus();
  }
  if (*mode == RdmaNetnsMode::kShared) {
    deps.log.debug("RDMA netns mode is shared; {} stays visible to all namespaces",
                   fmt::join(devs, ","));
    return okStatus();
  }
  for (const auto& d : devs) {
    const Status s = deps.host.moveRdmaToNetns(d, pod_fd);
    if (!s.ok()) return s.error().context("moving RDMA device " + d + " into the pod");
    st.rdma_moved.push_back(d);
  }
  return okStatus();
}

Status returnRdmaToHost(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  if (st.rdma_moved.empty() || netns.empty()) return okStatus();
  auto host = deps.runner.open(deps.host_netns_path);
  if (!host.ok()) return host.error().context("opening the host netns");
  const int host_fd = host->fd();
  auto r = runInPodIfExists(deps, netns, [&](Netlink& nl) -> Status {
    for (const auto& d : st.rdma_moved) {
      const Status s = nl.moveRdmaToNetns(d, host_fd);
      // ENODEV: not in the pod any more (already back).
      if (!s.ok() && s.error().code != ErrorCode::kDeviceNotFound) {
        return s.error().context("returning RDMA device " + d);
      }
    }
    return okStatus();
  });
  if (!r.ok()) return r.error();
  return okStatus();
}

Status checkRdmaInPod(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  if (st.rdma_moved.empty()) return okStatus();
  // The device in the pod: CNI_IFNAME, or the moved device under a host-device VLAN.
  const std::string pod_dev = st.pod_lower.empty() ? st.ifname : st.pod_lower;
  return deps.runner.run(netns, [&](Netlink& nl) -> Status {
    // In exclusive mode (the only one in which devices are moved) the dump lists only the
    // devices in the caller's namespace.
    RDMANET_ASSIGN_OR_RETURN(auto links, nl.rdmaLinks());
    for (const auto& d : st.rdma_moved) {
      auto it = std::find_if(links.begin(), links.end(),
                             [&](const RdmaLink& l) { return l.device == d; });
      if (it == links.end()) {
        return makeError(ErrorCode::kDeviceNotFound,
                         fmt::format("RDMA device {} is not in the pod's network namespace", d));
      }
      if (!it->netdev.empty() && it->netdev != pod_dev) {
        return makeError(ErrorCode::kInvalidConfig,
                         fmt::format("RDMA device {} port {} is bound to {} in the pod, not {}", d,
                                     it->port, it->netdev, pod_dev));
      }
    }
    return okStatus();
  });
}

std::optional<int> roceV2GidIndex(const Sysfs& sysfs, const std::string& rdma_dev,
                                  const IpAddress& ipv4) {
  auto dev = readRdmaDevice(sysfs, rdma_dev);
  if (!dev.ok() || dev->ports.empty()) return std::nullopt;
  const std::string want = mappedGid(ipv4);
  for (const auto& g : dev->ports.front().gids) {
    if (g.type == "RoCE v2" && g.gid == want) return g.index;
  }
  return std::nullopt;
}

nlohmann::json deviceInfoJson(const PluginDeps& deps, const DeviceInfoInput& in) {
  const NetConf& c = *in.conf;
  const ResolvedDevice& d = *in.dev;
  nlohmann::json pci = nlohmann::json::object();
  if (d.pci) pci["pci-address"] = d.pci->str();
  if (d.pf) pci["pf-pci-address"] = d.pf->str();
  if (!in.rdma.empty()) pci["rdma-device"] = fmt::format("{}", fmt::join(in.rdma, ","));
  nlohmann::json ext = {{"mode", std::string(modeName(d.mode))}};
  if (d.numa_node >= 0) ext["numa-node"] = d.numa_node;
  if (c.hasVlan()) ext["vlan"] = *c.vlan;
  if (c.hasVlan() || c.lossless) ext["pcp"] = c.pcp();
  if (c.lossless) ext["lossless-priority"] = c.lossless->priority;
  if (in.lossless != nullptr && !in.lossless->dscps.empty()) {
    ext["dscp"] = in.lossless->dscps.front();
    ext["dscps"] = in.lossless->dscps;
  }
  if (in.result != nullptr && !in.rdma.empty()) {
    for (const auto& ip : in.result->ips) {
      if (!ip.address.address.isV4()) continue;
      if (auto idx = roceV2GidIndex(deps.sysfs, in.rdma.front(), ip.address.address)) {
        ext["roce-v2-gid-index"] = *idx;
      }
      break;
    }
  }
  return {{"type", "pci"}, {"version", "1.1.0"}, {"pci", pci}, {"rdmanet", ext}};
}

Status writeDeviceInfo(const std::string& path, const nlohmann::json& doc) {
  std::error_code ec;
  const std::filesystem::path p(path);
  std::filesystem::create_directories(p.parent_path(), ec);
  return writeFileAtomic(p, dumpJson(doc, 2), kCniWrite);
}

}  // namespace rdmanet::cni
