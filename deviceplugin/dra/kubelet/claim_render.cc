#include "deviceplugin/dra/kubelet/claim_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "deviceplugin/dra/kubelet/request_env.h"
#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {

Result<RenderedClaim> renderClaim(const ClaimRef& ref, const std::vector<AllocatedDevice>& results,
                                  const DeviceSnapshot& inv, const RenderOptions& opts) {
  // Each top-level request with its devices, in the order of the results. A device twice in one
  // request (a shareable PF) is one device to the container.
  std::vector<std::pair<std::string, std::vector<const NodeDevice*>>> requests;
  for (const AllocatedDevice& r : results) {
    const NodeDevice* d = inv.find(r.device);
    if (!d) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("claim {}/{}: device {} is not a device of {} on node {}",
                                   ref.ns, ref.name, r.device, opts.driver, opts.node));
    }
    const std::string_view req = baseRequest(r.request);
    auto it = std::find_if(requests.begin(), requests.end(),
                           [&](const auto& q) { return q.first == req; });
    if (it == requests.end()) it = requests.insert(requests.end(), {std::string(req), {}});
    if (std::find(it->second.begin(), it->second.end(), d) == it->second.end()) {
      it->second.push_back(d);
    }
  }
  RenderedClaim out{
      .prepared = {.ref = ref, .cdi_spec = opts.cdi_dir / claimSpecFileName(ref.uid)}};
  std::vector<CdiDevice> envs;
  for (const auto& [req, devs] : requests) {
    RDMANET_ASSIGN_OR_RETURN(auto env, requestEnv(inv, devs));
    const std::string env_name = requestCdiName(ref.uid, req);
    envs.push_back({.name = env_name, .edits = {.envs = std::move(env)}});
    for (const NodeDevice* d : devs) {
      const std::string name = deviceCdiName(ref.uid, d->name);
      // A device of several requests (shareable) has one CDI device, and one entry per request
      // for kubelet: each entry brings its own request's env only.
      if (std::none_of(out.cdi.begin(), out.cdi.end(),
                       [&](const CdiDevice& c) { return c.name == name; })) {
        RDMANET_ASSIGN_OR_RETURN(ContainerAllocation own,
                                 buildAllocation(*inv.pool(d->pool), {d->device.id}, {}));
        own.envs.clear();  // the request's env device carries it
        out.cdi.push_back({.name = name, .edits = std::move(own)});
      }
      out.prepared.devices.push_back(
          {.request_names = {req},
           .pool_name = opts.node,
           .device_name = d->name,
           .cdi_device_ids = {cdiDeviceId(name), cdiDeviceId(env_name)}});
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
      out.push_back({.request = r, .device = d.device_name});
    }
  }
  return out;
}

}  // namespace rdmanet::dp
