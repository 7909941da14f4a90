#include "deviceplugin/dra/prepare.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/kube/names.h"
#include "deviceplugin/dra/cdi_spec.h"
#include "deviceplugin/dra/claim_allocation.h"
#include "deviceplugin/dra/request_env.h"
#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {

namespace {

// Kubelet's end of the call reaches its deadline a little before ours does (the deadline crosses
// a socket): commit only with at least this much left.
constexpr std::chrono::milliseconds kCommitMargin{100};

bool tooLateToCommit(const Deadline& d) { return d.at && d.left(kCommitMargin) < kCommitMargin; }

Error tooLate(const ClaimRef& ref, std::string_view step) {
  return makeError(ErrorCode::kTryAgainLater,
                   fmt::format("claim {}/{}: kubelet's deadline passed {}; nothing was prepared",
                               ref.ns, ref.name, step));
}

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
  // Each top-level request with its devices, in the order of the results. A device twice in one
  // request (a shareable PF) is one device to the container.
  std::vector<std::pair<std::string, std::vector<const NodeDevice*>>> requests;
  for (const AllocatedDevice& r : results) {
    const NodeDevice* d = inv->find(r.device);
    if (!d) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("claim {}/{}: device {} is not a device of {} on node {}",
                                   ref.ns, ref.name, r.device, opts_.driver, opts_.node));
    }
    const std::string_view req = baseRequest(r.request);
    auto it = std::find_if(requests.begin(), requests.end(),
                           [&](const auto& q) { return q.first == req; });
    if (it == requests.end()) it = requests.insert(requests.end(), {std::string(req), {}});
    if (std::find(it->second.begin(), it->second.end(), d) == it->second.end()) {
      it->second.push_back(d);
    }
  }
  PreparedClaim out{.ref = ref, .cdi_spec = opts_.cdi_dir / claimSpecFileName(ref.uid)};
  std::vector<CdiDevice> cdi, envs;
  for (const auto& [req, devs] : requests) {
    RDMANET_ASSIGN_OR_RETURN(auto env, requestEnv(*inv, devs));
    const std::string env_name = requestCdiName(ref.uid, req);
    envs.push_back({.name = env_name, .edits = {.envs = std::move(env)}});
    for (const NodeDevice* d : devs) {
      const std::string name = deviceCdiName(ref.uid, d->name);
      // A device of several requests (shareable) has one CDI device, and one entry per request
      // for kubelet: each entry brings its own request's env only.
      if (std::none_of(cdi.begin(), cdi.end(),
                       [&](const CdiDevice& c) { return c.name == name; })) {
        RDMANET_ASSIGN_OR_RETURN(ContainerAllocation own,
                                 buildAllocation(*inv->pool(d->pool), {d->device.id}, {}));
        own.envs.clear();  // the request's env device carries it
        cdi.push_back({.name = name, .edits = std::move(own)});
      }
      out.devices.push_back({.request_names = {req},
                             .pool_name = opts_.node,
                             .device_name = d->name,
                             .cdi_device_ids = {cdiDeviceId(name), cdiDeviceId(env_name)}});
    }
  }
  cdi.insert(cdi.end(), std::make_move_iterator(envs.begin()), std::make_move_iterator(envs.end()));
  RDMANET_RETURN_IF_ERROR(writeClaimCdiSpec(out.cdi_spec, cdi));
  return out;
}

Result<PreparedClaim> ClaimPreparer::prepare(const ClaimRef& ref, const Deadline& deadline) {
  RDMANET_RETURN_IF_ERROR(checkRef(ref));
  {
    std::lock_guard lk(mu_);
    if (const PreparedClaim* c = checkpoint_.find(ref.uid)) return *c;
  }
  // Outside the lock: a slow GET must not hold up other claims.
  RDMANET_ASSIGN_OR_RETURN(nlohmann::json claim, reader_.getClaim(ref.ns, ref.name, deadline));
  std::lock_guard lk(mu_);
  // A concurrent call for the same claim may have finished meanwhile: answer the same.
  if (const PreparedClaim* c = checkpoint_.find(ref.uid)) return *c;
  if (tooLateToCommit(deadline)) return tooLate(ref, "while the claim was read");
  RDMANET_ASSIGN_OR_RETURN(PreparedClaim prepared, build(ref, claim));
  if (tooLateToCommit(deadline)) {
    (void)removeClaimCdiSpec(prepared.cdi_spec);
    return tooLate(ref, "while its CDI spec was written");
  }
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
