#include "cni/plugin.h"

#include <fmt/format.h>

#include "cni/modes/lossless.h"
#include "cni/modes/mode.h"
#include "cni/modes/rdma_attach.h"
#include "cni/modes/rollback.h"
#include "cni/modes/vf_rate.h"
#include "cni/pod/device_info_file.h"
#include "cni/pod/pod_config.h"
#include "cni/pod/pod_info.h"
#include "cni/pod/pod_netns.h"
#include "cni/state/device_lock.h"
#include "cni/state/ownership.h"

namespace rdmanet::cni {
namespace {

CniResult mergeWithPrev(const NetConf& conf, const CniResult& ours_ipam,
                        const CniInterface& iface) {
  CniResult out;
  if (conf.prev_result.is_object()) {
    auto prev = parseResult(conf.prev_result);
    if (prev.ok()) out = std::move(prev).value();
  }
  const int idx = static_cast<int>(out.interfaces.size());
  out.interfaces.push_back(iface);
  for (CniIp ip : ours_ipam.ips) {
    ip.interface = idx;
    out.ips.push_back(ip);
  }
  out.routes.insert(out.routes.end(), ours_ipam.routes.begin(), ours_ipam.routes.end());
  if (out.dns.empty()) out.dns = ours_ipam.dns;
  return out;
}

}  // namespace

std::string deviceLockKey(Mode mode, const std::string& pci, const std::string& netdev) {
  if (mode == Mode::kMacvlan) return "";
  return lockName("dev", pci.empty() ? netdev : pci);
}

Status Plugin::ipamCall(const CniEnv& env, const std::string& command, const nlohmann::json& raw,
                        const std::string& type, const std::string& version) {
  Ipam ipam(deps_.ipam, &deps_.store);
  auto r =
      ipam.run({.type = type, .conf = raw, .version = version, .env = &env, .command = command});
  if (!r.ok()) return r.error();
  return okStatus();
}

Result<CniResult> Plugin::add(const CniEnv& env, const NetConf& conf) {
  RDMANET_RETURN_IF_ERROR(refuseHostNetns(env.netns, deps_.host_netns_paths));
  RDMANET_ASSIGN_OR_RETURN(const ResolvedDevice dev, resolveDevice(conf, deps_));
  RDMANET_ASSIGN_OR_RETURN(NetnsHandle pod, deps_.runner.open(env.netns));
  RDMANET_RETURN_IF_ERROR(deps_.store.ensure());
  DeviceLock lock;
  const std::string key =
      deviceLockKey(dev.mode, dev.pci ? dev.pci->str() : std::string(), dev.netdev);
  if (!key.empty()) {
    RDMANET_ASSIGN_OR_RETURN(
        lock, DeviceLock::acquire(deps_.store.lockPath(key), deps_.lock_timeout, deps_.clock));
  }
  RDMANET_ASSIGN_OR_RETURN(auto existing, deps_.store.load(env.container_id, env.ifname));
  if (existing) {
    return makeError(
        ErrorCode::kInvalidConfig,
        fmt::format("{}/{} is already attached; DEL it first", env.container_id, env.ifname));
  }

  LosslessFinding lossless;
  if (conf.lossless) {
    RDMANET_ASSIGN_OR_RETURN(lossless,
                             checkLossless(
                                 *conf.lossless, dev.dcbPort(), conf.hasVlan(),
                                 [&] { return deps_.host.dcb(dev.dcbPort()); }, deps_.log));
    RDMANET_RETURN_IF_ERROR(checkPodMtu(
        *conf.lossless, dev.dcbPort(), dev.mode == Mode::kSriov ? "PF" : "port", conf.mtu,
        [&]() -> Result<uint32_t> {
          RDMANET_ASSIGN_OR_RETURN(LinkInfo l, deps_.host.linkByName(dev.dcbPort()));
          return l.mtu;
        },
        deps_.log));
  }

  AttachmentState st = AttachmentState::forInvocation(env, conf);
  st.mode = dev.mode;
  st.boot_id = readBootId(deps_.boot_id_file);
  st.added_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deps_.clock.now().time_since_epoch())
          .count();

  const std::optional<uint32_t> share = shareToEnforce(deps_, env, conf, dev);
  const AttachContext ctx{.deps = deps_,
                          .env = env,
                          .conf = conf,
                          .dev = dev,
                          .pod_fd = pod.fd(),
                          .claim_share_mbps = share};
  auto attacher = makeAttacher(dev.mode);
  RDMANET_RETURN_IF_ERROR(attacher->prepare(ctx, st));
  // Recorded before the first change, so even a crash mid-ADD leaves DEL what it needs.
  RDMANET_RETURN_IF_ERROR(deps_.store.save(st));

  Rollback rb(deps_.log);
  rb.push("remove state", [&] { return deps_.store.remove(st.container_id, st.ifname); });
  const int expected_pod_ifindex = st.dev_pod_ifindex;
  RDMANET_RETURN_IF_ERROR(attacher->attach(ctx, st, rb));
  // Again when attach recorded more (VF knobs changed, the device got another ifindex in the
  // pod than it had in the host), so a crash from here on restores them.
  if (!st.vf_knobs_set.empty() || st.dev_pod_ifindex != expected_pod_ifindex) {
    RDMANET_RETURN_IF_ERROR(deps_.store.save(st));
  }

  // A macvlan shares its master's HCA: its RDMA devices are only reported in the device-info
  // file, so without one they are not looked up.
  const bool want_rdma =
      conf.rdma && (dev.mode != Mode::kMacvlan || !conf.device_info_file.empty());
  const std::vector<std::string> rdma =
      want_rdma ? rdmaDevicesFor(deps_, conf, dev) : std::vector<std::string>{};
  if (dev.mode != Mode::kMacvlan && !rdma.empty()) {
    rb.push("return RDMA devices", [&] { return returnRdmaToHost(deps_, st, st.netns); });
    const Status moved = moveRdmaIntoPod(deps_, rdma, pod.fd(), st);
    if (!st.rdma_moved.empty()) RDMANET_RETURN_IF_ERROR(deps_.store.save(st));
    RDMANET_RETURN_IF_ERROR(moved);
  }

  CniResult ipam_result;
  if (!conf.ipam_type.empty()) {
    Ipam ipam(deps_.ipam, &deps_.store);
    rb.push("release IPAM",
            [&] { return ipamCall(env, "DEL", conf.raw, conf.ipam_type, conf.cni_version); });
    RDMANET_ASSIGN_OR_RETURN(ipam_result, ipam.run({.type = conf.ipam_type,
                                                    .conf = conf.raw,
                                                    .version = conf.cni_version,
                                                    .env = &env,
                                                    .command = "ADD"},
                                                   &st.ipam_version));
  } else {
    for (const auto& ip : conf.runtime_ips) ipam_result.ips.push_back({.address = ip});
  }

  LinkInfo link;
  RDMANET_RETURN_IF_ERROR(deps_.runner.run(env.netns, [&](Netlink& nl) -> Status {
    RDMANET_ASSIGN_OR_RETURN(link, configurePod(nl, env.ifname, ipam_result));
    return okStatus();
  }));

  CniInterface iface{
      .name = env.ifname, .mac = link.mac.str(), .mtu = link.mtu, .sandbox = env.netns};
  if (dev.mode != Mode::kMacvlan && dev.pci) iface.pci_id = dev.pci->str();
  CniResult result = mergeWithPrev(conf, ipam_result, iface);

  // The pod info directory: for a device the device plugin allocated (sriov, host-device).
  const bool pod_info = !conf.pod_info_dir.empty() && dev.pci && dev.mode != Mode::kMacvlan;
  if (!conf.device_info_file.empty() || pod_info) {
    DeviceInfoInput in{.conf = &conf,
                       .dev = &dev,
                       .rdma = rdma,
                       .lossless = conf.lossless ? &lossless : nullptr,
                       .result = &ipam_result};
    const nlohmann::json info = deviceInfoJson(deps_, in);
    if (!conf.device_info_file.empty()) {
      rb.push("remove device-info file", [&] {
        (void)removeDeviceInfo(deps_.node.devinfo_root, conf.device_info_file);
        return okStatus();
      });
      RDMANET_RETURN_IF_ERROR(
          writeDeviceInfo(deps_.node.devinfo_root, conf.device_info_file, info));
    }
    if (pod_info) {
      st.pod_info_dir = podInfoDirFor(conf.pod_info_dir, *dev.pci);
      rb.push("remove pod info", [&] {
        removePodInfo(deps_.node.pod_info_root, st.pod_info_dir);
        return okStatus();
      });
      RDMANET_RETURN_IF_ERROR(writePodInfo(deps_.node.pod_info_root, st.pod_info_dir,
                                           podInfoJson(info, env.ifname, ipam_result)));
    }
  }

  st.result = resultToJson(result, "1.1.0");
  st.pod_ifindex = link.ifindex;
  st.complete = true;
  RDMANET_RETURN_IF_ERROR(deps_.store.save(st));
  rb.dismiss();
  deps_.log.info("ADD done: {} {} as {}", modeName(dev.mode), dev.netdev, env.ifname);
  return result;
}

}  // namespace rdmanet::cni
