// DEL and GC: releasing recorded attachments.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "cni/ipam/ipam.h"
#include "cni/modes/mode.h"
#include "cni/modes/rdma_attach.h"
#include "cni/modes/state_recovery.h"
#include "cni/plugin.h"
#include "cni/pod/device_info_file.h"
#include "cni/pod/pod_info.h"
#include "cni/pod/pod_netns.h"
#include "cni/state/device_lock.h"
#include "cni/state/ownership.h"
#include "common/os/atomic_file.h"

namespace rdmanet::cni {
namespace {

// Temp and lock files of invocations that died holding them (common/os/held_file.h): the
// store's, and
// those beside the given device-info files. Cheap (a few small directories), so every DEL and
// GC does it: a crashed ADD is followed by a DEL, which cleans up after it.
void sweepStale(PluginDeps& deps, const std::vector<std::string>& device_info_files) {
  int n = deps.store.sweepStale();
  std::vector<std::string> dirs;
  for (const std::string& f : device_info_files) {
    if (f.empty()) continue;
    const std::string dir = std::filesystem::path(f).parent_path().string();
    if (std::find(dirs.begin(), dirs.end(), dir) != dirs.end()) continue;
    dirs.push_back(dir);
    n += removeDeviceInfo(deps.node.devinfo_root, f, false);
  }
  if (n > 0) deps.log.info("removed {} temp or lock files left by crashed invocations", n);
}

// The attachments a torn state file's name ("<containerid>_<ifname>") can stand for: both
// parts may hold '_', so every split into a valid id and ifname (nearly always one).
std::vector<Attachment> attachmentsNamed(const std::string& name) {
  std::vector<Attachment> out;
  for (size_t at = name.find('_'); at != std::string::npos; at = name.find('_', at + 1)) {
    Attachment a{name.substr(0, at), name.substr(at + 1)};
    if (isValidContainerId(a.container_id) && isValidIfname(a.ifname)) out.push_back(a);
  }
  return out;
}

}  // namespace

Status Plugin::release(const CniEnv& env, const AttachmentState& st, const std::string& netns,
                       const NetConf* conf) {
  DeviceLock lock;
  const std::string key = deviceLockKey(st.mode, st.pci, st.host_ifname);
  if (!key.empty()) {
    RDMANET_ASSIGN_OR_RETURN(
        lock, DeviceLock::acquire(deps_.store.lockPath(key), deps_.lock_timeout, deps_.clock));
  }
  // A stale record (an earlier boot; the device given to another attachment since) releases
  // its lease and its files, and leaves the device, its knobs and its pod info to their owner.
  const std::string not_ours = whyNotOurs(deps_.store, st, readBootId(deps_.boot_id_file));
  if (not_ours.empty()) {
    RDMANET_RETURN_IF_ERROR(returnRdmaToHost(deps_, st, netns));
    RDMANET_RETURN_IF_ERROR(detach(deps_, st, netns));
  } else {
    deps_.log.warn("{}/{}: leaving {} ({}) alone: {}", st.container_id, st.ifname, st.host_ifname,
                   st.pci.empty() ? std::string("no PCI address") : st.pci, not_ours);
  }

  // IPAM: the DEL netconf when it names one (the runtime passes ADD's config), else ADD's.
  const bool use_conf = conf != nullptr && !conf->ipam_type.empty();
  const std::string type = use_conf ? conf->ipam_type : st.ipam_type;
  if (!type.empty()) {
    CniEnv ienv = env;
    ienv.container_id = st.container_id;
    ienv.ifname = st.ifname;
    ienv.netns = netns;
    const nlohmann::json& raw = use_conf ? conf->raw : st.raw_conf;
    const std::string version = use_conf ? conf->cni_version : st.cni_version;
    RDMANET_RETURN_IF_ERROR(ipamCall(ienv, "DEL", raw, type, version));
  }
  // Both confined as at ADD: a state written by an older version or by hand is held to the roots.
  (void)removeDeviceInfo(deps_.node.devinfo_root, st.device_info_file);
  if (!st.pod_info_dir.empty() && not_ours.empty()) {
    removePodInfo(deps_.node.pod_info_root, st.pod_info_dir);
  }
  return deps_.store.remove(st.container_id, st.ifname);
}

Status Plugin::del(const CniEnv& given, const NetConf& conf) {
  // DEL must not act on the host's links, but must succeed (the runtime retries a failed DEL
  // forever): a host namespace is treated as a netns that is gone. An ADD that used it was
  // refused, so there is nothing of ours in it.
  CniEnv env = given;
  if (const std::string same = sameNetnsAs(env.netns, deps_.host_netns_paths); !same.empty()) {
    deps_.log.warn("DEL: CNI_NETNS {} is the host's namespace ({}); not entering it", env.netns,
                   same);
    env.netns.clear();
  }
  bool torn = false;
  RDMANET_ASSIGN_OR_RETURN(auto st, deps_.store.load(env.container_id, env.ifname, &torn));
  sweepStale(deps_, {conf.device_info_file, st ? st->device_info_file : std::string()});
  if (torn) {
    // Empty or cut short (a power loss): no state. DEL must finish, or the pod stays
    // Terminating and its lease leaks; what the file said is recovered below where provable.
    deps_.log.warn("DEL: the state file of {}/{} does not parse; treating it as no state",
                   env.container_id, env.ifname);
  }
  if (!st) {
    // Nothing recorded: ADD never got far, DEL already ran, or the state file was lost while
    // the pod still holds the device, which recoverState() finds and describes.
    RDMANET_ASSIGN_OR_RETURN(auto rebuilt, recoverState(deps_, env, conf));
    if (rebuilt) return release(env, *rebuilt, env.netns, &conf);
    // IPAM keys its leases on container id + ifname and is itself idempotent.
    deps_.log.info("DEL: no state for {}/{}; releasing IPAM only", env.container_id, env.ifname);
    if (!conf.ipam_type.empty()) {
      RDMANET_RETURN_IF_ERROR(ipamCall(env, "DEL", conf.raw, conf.ipam_type, conf.cni_version));
    }
    return deps_.store.remove(env.container_id, env.ifname);  // a torn file
  }
  const std::string netns = env.netns.empty() ? st->netns : env.netns;
  RDMANET_RETURN_IF_ERROR(release(env, *st, netns, &conf));
  deps_.log.info("DEL done: {} {}", modeName(st->mode), st->host_ifname);
  return okStatus();
}

Status Plugin::releaseTorn(const CniEnv& env, const NetConf& conf, const std::string& name) {
  // Whose network the file was is gone with its content: a file that may be a valid
  // attachment's stays for that attachment's DEL; any other is stale whatever its network. Its
  // lease is released with this network's IPAM (a delegate keys leases on container id and
  // ifname, so another network's are not touched); a device it held is not provable without
  // its netns, so no link is touched.
  const std::vector<Attachment> names = attachmentsNamed(name);
  for (const Attachment& a : names) {
    if (std::find(conf.valid_attachments.begin(), conf.valid_attachments.end(), a) !=
        conf.valid_attachments.end()) {
      deps_.log.warn("GC: the state file {}.json does not parse; {}/{} is valid, so it stays", name,
                     a.container_id, a.ifname);
      return okStatus();
    }
  }
  deps_.log.warn("GC: the state file {}.json does not parse; releasing its lease and removing it",
                 name);
  for (const Attachment& a : names) {
    if (conf.ipam_type.empty()) break;
    CniEnv ienv = env;
    ienv.container_id = a.container_id;
    ienv.ifname = a.ifname;
    RDMANET_RETURN_IF_ERROR(ipamCall(ienv, "DEL", conf.raw, conf.ipam_type, conf.cni_version));
  }
  return deps_.store.removeTorn(name);
}

Status Plugin::gc(const CniEnv& env, const NetConf& conf) {
  Status first = okStatus();
  std::vector<std::string> torn;
  const std::vector<AttachmentState> recorded = deps_.store.list(&torn);
  std::vector<std::string> device_info_files;
  device_info_files.reserve(recorded.size());
  for (const AttachmentState& st : recorded) device_info_files.push_back(st.device_info_file);
  sweepStale(deps_, device_info_files);
  if (conf.has_valid_attachments) {
    for (const AttachmentState& st : recorded) {
      if (st.network != conf.name) continue;  // another network's attachment
      const Attachment a{st.container_id, st.ifname};
      if (std::find(conf.valid_attachments.begin(), conf.valid_attachments.end(), a) !=
          conf.valid_attachments.end()) {
        continue;
      }
      deps_.log.info("GC: releasing stale attachment {}/{}", st.container_id, st.ifname);
      const Status s = release(env, st, st.netns, nullptr);
      if (!s.ok()) {
        deps_.log.warn("GC: {}/{}: {}", st.container_id, st.ifname, s.error().msg);
        if (first.ok()) first = s;
      }
    }
    for (const std::string& name : torn) {
      const Status s = releaseTorn(env, conf, name);
      if (!s.ok() && first.ok()) first = s;
    }
  }
  if (!conf.ipam_type.empty()) {
    // Only delegates that speak 1.1.0 know GC; older ones (Debian's) had their leases released
    // above, attachment by attachment.
    Ipam ipam(deps_.ipam, &deps_.store);
    auto versions = ipam.delegateVersions(
        {.type = conf.ipam_type, .conf = conf.raw, .version = conf.cni_version, .env = &env});
    const bool knows_gc =
        versions.ok() && std::find(versions->begin(), versions->end(), "1.1.0") != versions->end();
    if (knows_gc) {
      const Status s = ipamCall(env, "GC", conf.raw, conf.ipam_type, conf.cni_version);
      if (!s.ok() && first.ok()) first = s;
    } else {
      deps_.log.debug("GC: {} predates CNI 1.1; not forwarding GC", conf.ipam_type);
    }
  }
  return first;
}

}  // namespace rdmanet::cni
