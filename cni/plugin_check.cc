// CHECK and STATUS.
#include <fmt/format.h>

#include "cni/modes/mode.h"
#include "cni/modes/rdma_attach.h"
#include "cni/modes/vf_rate.h"
#include "cni/plugin.h"
#include "cni/pod/pod_config.h"
#include "cni/pod/pod_netns.h"
#include "common/inventory/netdev.h"
#include "common/inventory/pci.h"

namespace rdmanet::cni {
namespace {

Error unavailable(std::string msg) {
  return makeError(ErrorCode::kPluginNotAvailable, std::move(msg));
}

// STATUS of one host link: missing -> 50, down -> 51.
Status linkStatus(Netlink& host, const std::string& name, std::string_view role) {
  auto l = host.linkByName(name);
  if (!l.ok()) return unavailable(fmt::format("{} {} not found: {}", role, name, l.error().msg));
  if (!l->admin_up || !l->carrier) {
    return makeError(ErrorCode::kLimitedConnectivity,
                     fmt::format("{} {} is down (admin {}, carrier {})", role, name,
                                 l->admin_up ? "up" : "down", l->carrier ? "up" : "down"));
  }
  return okStatus();
}

}  // namespace

Status Plugin::check(const CniEnv& env, const NetConf& conf) {
  RDMANET_RETURN_IF_ERROR(refuseHostNetns(env.netns, deps_.host_netns_paths));
  if (!conf.prev_result.is_object()) {
    return makeError(ErrorCode::kInvalidConfig, "CHECK needs \"prevResult\"");
  }
  RDMANET_ASSIGN_OR_RETURN(const CniResult prev, parseResult(conf.prev_result));
  RDMANET_ASSIGN_OR_RETURN(auto st, deps_.store.load(env.container_id, env.ifname));
  if (!st || !st->complete) {
    return makeError(ErrorCode::kDeviceNotFound,
                     fmt::format("CHECK: no attachment {}/{}", env.container_id, env.ifname));
  }
  // Our interface in prevResult, and the addresses that point at it.
  PodExpectation want{.ifname = env.ifname, .mtu = conf.mtu};
  int ours = -1;
  for (size_t i = 0; i < prev.interfaces.size(); ++i) {
    if (prev.interfaces[i].name == env.ifname && prev.interfaces[i].sandbox == env.netns) {
      ours = static_cast<int>(i);
      if (auto mac = MacAddress::parse(prev.interfaces[i].mac); mac.ok()) want.mac = *mac;
    }
  }
  if (ours < 0) {
    return makeError(
        ErrorCode::kInvalidConfig,
        fmt::format("CHECK: prevResult has no interface {} in {}", env.ifname, env.netns));
  }
  for (const auto& ip : prev.ips) {
    if (ip.interface == ours) want.ips.ips.push_back(ip);
  }
  // Routes: ours from ADD (prevResult may carry other plugins' routes, which they may change).
  if (auto ours_result = parseResult(st->result); ours_result.ok()) {
    want.ips.routes = ours_result->routes;
  }
  const ResolvedDevice dev{.mode = st->mode};
  std::optional<uint32_t> share;
  if (st->mode == Mode::kSriov) {
    auto pci = PciAddress::parse(st->pci);
    if (pci.ok()) share = claimedShare(deps_, env, conf, *pci);
  } else if (st->mode == Mode::kMacvlan) {
    // As ADD found it (shareToEnforce).
    share = claimedShare(deps_, env, conf, macvlanClaimedPci(deps_, env, conf, st->host_ifname));
  }
  const AttachContext ctx{
      .deps = deps_, .env = env, .conf = conf, .dev = dev, .claim_share_mbps = share};
  RDMANET_RETURN_IF_ERROR(makeAttacher(st->mode)->check(ctx, *st));
  RDMANET_RETURN_IF_ERROR(checkRdmaInPod(deps_, *st, env.netns));
  RDMANET_RETURN_IF_ERROR(
      deps_.runner.run(env.netns, [&](Netlink& nl) { return checkPod(nl, want); }));
  if (!conf.ipam_type.empty()) {
    RDMANET_RETURN_IF_ERROR(ipamCall(env, "CHECK", conf.raw, conf.ipam_type, conf.cni_version));
  }
  return okStatus();
}

Status Plugin::status(const CniEnv& env, const NetConf& conf) {
  (void)env;
  if (!conf.master.empty()) return linkStatus(deps_.host, conf.master, "master");
  if (conf.device_id) {
    auto fn = readPciFunction(deps_.sysfs, *conf.device_id);
    if (!fn.ok()) return unavailable(fmt::format("PCI device {} not found", conf.device_id->str()));
    const PciAddress port = fn->pf.value_or(fn->address);
    const auto names = netdevNamesOf(deps_.sysfs, port);
    if (names.empty()) return unavailable(fmt::format("{} has no netdev", port.str()));
    return linkStatus(deps_.host, names.front(), fn->pf ? "PF" : "device");
  }
  if (!conf.device.empty()) {
    if (deps_.host.linkByName(conf.device).ok())
      return linkStatus(deps_.host, conf.device, "device");
    for (const auto& st : deps_.store.list()) {
      if (st.host_ifname == conf.device) return okStatus();  // attached to a pod right now
    }
    return unavailable(fmt::format("device {} not found", conf.device));
  }
  // An SR-IOV network learns its VF per pod; it can serve ADD when sysfs shows PCI devices.
  if (listPciFunctions(deps_.sysfs).empty()) {
    return unavailable("no PCI devices visible under " + deps_.sysfs.root().string() + "/sys");
  }
  return okStatus();
}

}  // namespace rdmanet::cni
