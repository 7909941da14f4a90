#include "deviceplugin/dra/kubelet/claim_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "deviceplugin/dra/kubelet/request_env.h"
#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {

Result<RenderedClaim> renderClaim(const ClaimRef& ref, const std::vector<AllocatedDevice>& results,
                                  const DeviceSnapshot& inv, const RenderOptions& opts) {
  // Each top-level request with its devices, in the order of the results, each device looked up
  // once (resolveDevice) for both its request's env and its own CDI edits. A device twice in one
  // request (a shareable PF) is one device to the container.
  struct Request {
    std::string name{};
    std::string subrequest{};  // "alt" of "nic/alt": the metadata names it
    std::vector<ResolvedDevice> devices{};
    bool admin_access = false;  // a request's results all share it
    // The bandwidth its results consumed of each device, summed (a device twice in one request
    // took its share twice).
    std::map<const NodeDevice*, int64_t> bandwidth_mbps{};
  };
  std::vector<Request> requests;
  std::map<const NodeDevice*, ResolvedDevice> resolved;  // a device of several requests: once
  for (const AllocatedDevice& r : results) {
    const NodeDevice* d = inv.find(r.device);
    if (!d) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("claim {}/{}: device {} is not a device of {} on node {}",
                                   ref.ns, ref.name, r.device, opts.driver, opts.node));
    }
    const std::string_view req = baseRequest(r.request);
    auto it = std::find_if(requests.begin(), requests.end(),
                           [&](const Request& q) { return q.name == req; });
    if (it == requests.end()) {
      const std::string_view sub = std::string_view(r.request).substr(req.size());
      it = requests.insert(requests.end(),
                           Request{.name = std::string(req),
                                   .subrequest = std::string(sub.empty() ? sub : sub.substr(1))});
    }
    it->admin_access = it->admin_access || r.admin_access;
    if (r.bandwidth_mbps) it->bandwidth_mbps[d] += *r.bandwidth_mbps;
    if (std::none_of(it->devices.begin(), it->devices.end(),
                     [&](const ResolvedDevice& x) { return x.node == d; })) {
      auto known = resolved.find(d);
      if (known == resolved.end()) {
        RDMANET_ASSIGN_OR_RETURN(ResolvedDevice rd, resolveDevice(inv, *d));
        known = resolved.emplace(d, rd).first;
      }
      it->devices.push_back(known->second);
    }
  }
  RenderedClaim out{.prepared = {.ref = ref,
                                 .cdi_spec = opts.cdi_dir / claimSpecFileName(ref.uid),
                                 .device_metadata = !opts.metadata_dir.empty(),
                                 .pod_claim_name = opts.pod_claim_name}};
  const MetadataClaim meta{
      .driver = opts.driver, .pool = opts.node, .ref = ref, .pod_claim_name = opts.pod_claim_name};
  std::vector<CdiDevice> envs;
  for (const auto& [req, sub, devs, admin, bandwidth] : requests) {
    const size_t first = out.prepared.devices.size();
    RDMANET_ASSIGN_OR_RETURN(auto env, requestEnv(devs));
    // Admin access is for monitoring: no pod-info dir, which only the pod the CNI attached the
    // device to has (the CNI fills it), and which would name the device as the pod's network.
    if (admin) std::erase_if(env, [](const auto& kv) { return kv.first.ends_with("_POD_INFO"); });
    const std::string env_name = requestCdiName(ref.uid, req);
    envs.push_back({.name = env_name, .edits = {.envs = std::move(env)}});
    for (const ResolvedDevice& d : devs) {
      const std::string name = deviceCdiName(ref.uid, d.node->name);
      // A device of several requests (shareable) has one CDI device, and one entry per request
      // for kubelet: each entry brings its own request's env only.
      if (std::none_of(out.cdi.begin(), out.cdi.end(),
                       [&](const CdiDevice& c) { return c.name == name; })) {
        RDMANET_ASSIGN_OR_RETURN(ContainerAllocation own,
                                 buildAllocation(*d.pool, {d.device->id}, {}));
        own.envs.clear();  // the request's env device carries it
        if (admin) own.mounts.clear();
        out.cdi.push_back({.name = name, .edits = std::move(own)});
      }
      out.prepared.devices.push_back({.request_names = {req},
                                      .pool_name = opts.node,
                                      .device_name = d.node->name,
                                      .cdi_device_ids = {cdiDeviceId(name), cdiDeviceId(env_name)},
                                      .admin_access = admin,
                                      .subrequest = sub});
      if (auto b = bandwidth.find(d.node); b != bandwidth.end()) {
        out.prepared.devices.back().max_tx_rate_mbps = b->second;
      }
    }
    if (!opts.metadata_dir.empty()) {
      const std::string full = sub.empty() ? req : fmt::format("{}/{}", req, sub);
      RDMANET_ASSIGN_OR_RETURN(
          RequestMetadata m,
          renderRequestMetadata(meta, full, devs, opts.metadata_dir, opts.cdi_dir));
      // One device per request names it, as upstream's helper does: kubelet gives a container
      // every device of the requests it references, so it gets the mount once.
      out.prepared.devices[first].cdi_device_ids.push_back(m.cdi_id);
      out.metadata.push_back(std::move(m));
    }
  }
  out.cdi.insert(out.cdi.end(), std::make_move_iterator(envs.begin()),
                 std::make_move_iterator(envs.end()));
  return out;
}

std::vector<AllocatedDevice> allocationOf(const PreparedClaim& claim) {
  std::vector<AllocatedDevice> out;
  for (const PreparedDevice& d : claim.devices) {
    for (const std::string& r : d.request_names) {
      out.push_back({.request = d.subrequest.empty() ? r : fmt::format("{}/{}", r, d.subrequest),
                     .device = d.device_name,
                     .admin_access = d.admin_access,
                     .bandwidth_mbps = d.max_tx_rate_mbps});
    }
  }
  return out;
}

}  // namespace rdmanet::dp
