#include "deviceplugin/dra/prepare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/kube/names.h"
#include "deviceplugin/dra/cdi_spec.h"
#include "deviceplugin/dra/claim_allocation.h"
#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {

namespace {

Status checkRef(const ClaimRef& ref) {
  if (!isValidClaimUid(ref.uid)) {
    return makeError(ErrorCode::kInvalidConfig, "claim UID is empty or malformed");
  }
  if (!kube::isDnsLabel(ref.ns) || !kube::isDnsSubdomain(ref.name)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("claim {}: namespace or name is empty or malformed", ref.uid));
  }
  return okStatus();
}

}  // namespace

ClaimPreparer::ClaimPreparer(PreparerOptions opts, ClaimReader& reader, const DeviceState& state)
    : opts_(std::move(opts)), reader_(reader), state_(state), checkpoint_(opts_.checkpoint) {}

Status ClaimPreparer::start() {
  std::lock_guard lk(mu_);
  return checkpoint_.load();
}

size_t ClaimPreparer::preparedCount() const {
  std::lock_guard lk(mu_);
  return checkpoint_.claims().size();
}

Result<PreparedClaim> ClaimPreparer::build(const ClaimRef& ref, const nlohmann::json& claim) const {
  RDMANET_ASSIGN_OR_RETURN(auto results, ourAllocation(claim, ref, opts_.driver, opts_.node));
  const auto inv = state_.current();
  // Devices grouped by (request, core pool): each group reaches the same containers, so its env
  // is built over all of it.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  std::vector<const NodeDevice*> devs;
  for (const AllocatedDevice& r : results) {
    const NodeDevice* d = inv->find(r.device);
    if (!d) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("claim {}/{}: device {} is not a device of {} on node {}",
                                   ref.ns, ref.name, r.device, opts_.driver, opts_.node));
    }
    devs.push_back(d);
    auto& ids = groups[{r.request, d->pool}];
    // The same device twice in one request (a shareable PF) is one device to the container.
    if (std::find(ids.begin(), ids.end(), d->device.id) == ids.end()) ids.push_back(d->device.id);
  }
  std::map<std::pair<std::string, std::string>, ContainerAllocation> group_env;
  for (const auto& [key, ids] : groups) {
    const Pool* pool = inv->pool(key.second);
    if (!pool) return makeError(ErrorCode::kInternal, fmt::format("pool {} vanished", key.second));
    RDMANET_ASSIGN_OR_RETURN(group_env[key], buildAllocation(*pool, ids, {}));
  }
  PreparedClaim out{.ref = ref, .cdi_spec = opts_.cdi_dir / claimSpecFileName(ref.uid)};
  std::vector<CdiDevice> cdi;
  for (size_t i = 0; i < results.size(); ++i) {
    const NodeDevice* d = devs[i];
    const std::string name = fmt::format("{}-{}", ref.uid, d->name);
    auto existing = std::find_if(out.devices.begin(), out.devices.end(),
                                 [&](const PreparedDevice& p) { return p.device_name == d->name; });
    if (existing != out.devices.end()) {
      // One device for several requests: one CDI device, all the requests named.
      existing->request_names.push_back(results[i].request);
      continue;
    }
    RDMANET_ASSIGN_OR_RETURN(ContainerAllocation own,
                             buildAllocation(*inv->pool(d->pool), {d->device.id}, {}));
    own.envs = group_env[{results[i].request, d->pool}].envs;
    cdi.push_back({.name = name, .edits = std::move(own)});
    out.devices.push_back({.request_names = {results[i].request},
                           .pool_name = opts_.node,
                           .device_name = d->name,
                           .cdi_device_ids = {cdiDeviceId(name)}});
  }
  RDMANET_RETURN_IF_ERROR(writeClaimCdiSpec(out.cdi_spec, cdi));
  return out;
}

Result<PreparedClaim> ClaimPreparer::prepare(const ClaimRef& ref) {
  RDMANET_RETURN_IF_ERROR(checkRef(ref));
  {
    std::lock_guard lk(mu_);
    if (const PreparedClaim* c = checkpoint_.find(ref.uid)) return *c;
  }
  RDMANET_ASSIGN_OR_RETURN(nlohmann::json claim, reader_.getClaim(ref.ns, ref.name));
  std::lock_guard lk(mu_);
  // A concurrent call for the same claim may have finished meanwhile: answer the same.
  if (const PreparedClaim* c = checkpoint_.find(ref.uid)) return *c;
  RDMANET_ASSIGN_OR_RETURN(PreparedClaim prepared, build(ref, claim));
  if (auto st = checkpoint_.put(prepared); !st.ok()) {
    (void)removeClaimCdiSpec(prepared.cdi_spec);  // nothing left behind
    return st.error();
  }
  return prepared;
}

Status ClaimPreparer::unprepare(const ClaimRef& ref) {
  if (!isValidClaimUid(ref.uid)) {
    return makeError(ErrorCode::kInvalidConfig, "claim UID is empty or malformed");
  }
  std::lock_guard lk(mu_);
  const PreparedClaim* c = checkpoint_.find(ref.uid);
  // The UID's own file too: a crash between the spec write and the checkpoint write left it.
  RDMANET_RETURN_IF_ERROR(removeClaimCdiSpec(opts_.cdi_dir / claimSpecFileName(ref.uid)));
  if (c) RDMANET_RETURN_IF_ERROR(removeClaimCdiSpec(c->cdi_spec));
  return checkpoint_.erase(ref.uid);
}

}  // namespace rdmanet::dp
