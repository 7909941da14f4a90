#include "cni/modes/shared_vlan.h"

#include <fmt/format.h>

#include <algorithm>

#include "cni/conf/json_util.h"
#include "cni/state/device_lock.h"

namespace rdmanet::cni {
namespace {

std::string docPath(const std::string& link) { return "vlan/" + link + ".json"; }

}  // namespace

std::string sharedVlanName(const std::string& master, uint16_t vlan) {
  const std::string suffix = fmt::format(".{}", vlan);
  return master.substr(0, 15 - suffix.size()) + suffix;
}

std::vector<std::pair<uint32_t, uint32_t>> egressMapTo(uint8_t pcp) {
  std::vector<std::pair<uint32_t, uint32_t>> m;
  m.reserve(8);
  for (uint32_t prio = 0; prio < 8; ++prio) m.emplace_back(prio, pcp);
  return m;
}

Result<int> acquireSharedVlan(PluginDeps& deps, const SharedVlanSpec& spec) {
  const std::string name = sharedVlanName(spec.master, spec.vlan);
  RDMANET_RETURN_IF_ERROR(deps.store.ensure());
  RDMANET_ASSIGN_OR_RETURN(
      auto lock, DeviceLock::acquire(deps.store.lockPath(lockName("vlan", name)), deps.lock_timeout,
                                     deps.clock));
  RDMANET_ASSIGN_OR_RETURN(auto doc_opt, deps.store.readDoc(docPath(name)));
  json doc = doc_opt.value_or(json{{"users", json::array()}, {"created", false}});
  RDMANET_ASSIGN_OR_RETURN(const LinkInfo master, deps.host.linkByName(spec.master));

  auto existing = deps.host.linkByName(name);
  int ifindex = 0;
  if (existing.ok()) {
    if (existing->parent_ifindex != 0 && existing->parent_ifindex != master.ifindex) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("host link {} exists but is not on master {}", name, spec.master));
    }
    if (doc.contains("pcp") && doc["pcp"] != spec.pcp) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("host VLAN device {} already maps every priority to PCP {}, "
                                   "not {}: networks on one VLAN must agree on the lossless "
                                   "priority",
                                   name, dumpJson(doc["pcp"]), spec.pcp));
    }
    ifindex = existing->ifindex;
    if (doc_opt.has_value() == false) doc["created"] = false;  // an admin's device: keep it
  } else if (existing.error().code == ErrorCode::kDeviceNotFound) {
    RDMANET_ASSIGN_OR_RETURN(ifindex,
                             deps.host.addVlan(VlanSpec{.name = name,
                                                        .link_ifindex = master.ifindex,
                                                        .vlan_id = spec.vlan,
                                                        .proto = spec.proto,
                                                        .egress_qos = egressMapTo(spec.pcp),
                                                        .mtu = 0,
                                                        .netns_fd = -1}));
    doc["created"] = true;
    doc["users"] = json::array();
  } else {
    return existing.error();
  }
  doc["pcp"] = spec.pcp;
  doc["master"] = spec.master;
  auto& users = doc["users"];
  if (std::find(users.begin(), users.end(), spec.user) == users.end()) users.push_back(spec.user);
  // Register before the link is used, so a concurrent release sees this user.
  const Status saved = deps.store.writeDoc(docPath(name), doc);
  if (!saved.ok()) {
    if (doc["created"] == true && users.size() == 1) (void)deps.host.deleteLink(ifindex);
    return saved.error();
  }
  RDMANET_RETURN_IF_ERROR(deps.host.setUp(ifindex, true));
  return ifindex;
}

Status releaseSharedVlan(PluginDeps& deps, const std::string& link, const std::string& user) {
  if (link.empty()) return okStatus();
  RDMANET_RETURN_IF_ERROR(deps.store.ensure());
  RDMANET_ASSIGN_OR_RETURN(
      auto lock, DeviceLock::acquire(deps.store.lockPath(lockName("vlan", link)), deps.lock_timeout,
                                     deps.clock));
  RDMANET_ASSIGN_OR_RETURN(auto doc_opt, deps.store.readDoc(docPath(link)));
  if (!doc_opt) return okStatus();
  json doc = *doc_opt;
  auto& users = doc["users"];
  if (!users.is_array()) users = json::array();
  users.erase(std::remove(users.begin(), users.end(), user), users.end());
  if (!users.empty()) return deps.store.writeDoc(docPath(link), doc);
  if (doc.value("created", false)) {
    auto l = deps.host.linkByName(link);
    if (l.ok()) {
      Status s = deps.host.deleteLink(l->ifindex);
      if (!s.ok() && s.error().code != ErrorCode::kDeviceNotFound) return s;
    } else if (l.error().code != ErrorCode::kDeviceNotFound) {
      return l.error();
    }
  }
  return deps.store.removeDoc(docPath(link));
}

}  // namespace rdmanet::cni
