#include "deviceplugin/dra/kubelet/prepare.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "common/kube/names.h"
#include "common/os/atomic_file.h"
#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "deviceplugin/dra/kubelet/checkpoint_recovery.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"
#include "deviceplugin/dra/kubelet/claim_render.h"
#include "deviceplugin/dra/kubelet/pod_devices.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

// Kubelet's end of the call reaches its deadline a little before ours does (the deadline crosses
// a socket): commit only with at least this much left.
constexpr std::chrono::milliseconds kCommitMargin{100};

bool tooLateToCommit(const Deadline& d, const Clock& clock) {
  return d.at && d.left(kCommitMargin, clock) < kCommitMargin;
}

namespace fs = std::filesystem;

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

RenderOptions ClaimPreparer::renderOptions(const std::optional<std::string>& pod_claim_name) const {
  return {.driver = opts_.driver,
          .node = opts_.node,
          .cdi_dir = opts_.cdi_dir,
          .metadata_dir = opts_.device_metadata ? opts_.metadata_dir : fs::path(),
          .pod_claim_name = pod_claim_name};
}

RenderOptions ClaimPreparer::renderOptions(const PreparedClaim& c) const {
  RenderOptions o = renderOptions(c.pod_claim_name);
  o.metadata_dir = c.device_metadata ? opts_.metadata_dir : fs::path();
  return o;
}

MetadataPlace ClaimPreparer::metadataPlace() const {
  return {.dir = opts_.metadata_dir, .cdi_dir = opts_.cdi_dir, .driver = opts_.driver};
}

bool ClaimPreparer::onDisk(const PreparedClaim& c) const {
  std::error_code ec;
  if (!fs::exists(c.cdi_spec, ec)) return false;
  if (!c.device_metadata || opts_.metadata_dir.empty()) return true;
  std::set<std::string> requests;
  for (const PreparedDevice& d : c.devices)
    requests.insert(d.request_names.begin(), d.request_names.end());
  return claimMetadataPresent(metadataPlace(), c.ref.uid, {requests.begin(), requests.end()});
}

Status ClaimPreparer::start() {
  std::lock_guard lk(mu_);
  RDMANET_ASSIGN_OR_RETURN(CheckpointRecovery rec, loadOrRecover(checkpoint_));
  recovery_note_ = rec.note;
  if (!rec.note.empty()) logger(Component::kKubelet)->error("{}", rec.note);
  // Without a checkpoint to trust, every spec and record may be a running pod's: the sweeps
  // wait for the rebuild.
  rebuild_pending_ = rec.source == CheckpointRecovery::Source::kApi;
  if (!rebuild_pending_) sweepUnowned();
  return okStatus();
}

void ClaimPreparer::sweepUnowned() {
  auto log = logger(Component::kKubelet);
  std::set<std::string> owned;
  for (const auto& [uid, c] : checkpoint_.claims()) owned.insert(uid);
  // A spec, metadata or record no checkpoint entry owns was left by a crash before the
  // checkpoint write: its prepare never answered kubelet, and nothing will unprepare it.
  if (const int n = sweepClaimSpecs(opts_.cdi_dir, owned); n > 0) {
    log->info("removed {} CDI spec(s) in {}: no prepared claim owns them", n,
              opts_.cdi_dir.string());
  }
  if (!opts_.metadata_dir.empty()) {
    if (const int n = sweepClaimMetadata(metadataPlace(), owned); n > 0) {
      log->info("removed the device metadata of {} claim(s): no prepared claim owns it", n);
    }
  }
  if (!opts_.pod_devices_dir.empty()) sweepPodDevices(opts_.pod_devices_dir, owned);
  // A daemon killed between creating a spec's or the checkpoint's temp file and its rename left
  // the temp behind (writeFileAtomic's "<file>.rdmanet-tmp.<tid>"), which nothing else removes.
  for (const fs::path& dir : {opts_.cdi_dir, opts_.checkpoint.parent_path()}) {
    if (const int n = sweepAtomicTemps(dir); n > 0) {
      log->info("removed {} unfinished temp file(s) in {}: a write was cut short", n, dir.string());
    }
  }
}

bool ClaimPreparer::rebuildPending() const {
  std::lock_guard lk(mu_);
  return rebuild_pending_;
}

std::string ClaimPreparer::recoveryNote() const {
  std::lock_guard lk(mu_);
  return recovery_note_;
}

Status ClaimPreparer::rebuildFromApi(const Deadline& deadline) {
  // Outside the lock: kubelet's prepares go on meanwhile (they read their claims themselves).
  RDMANET_ASSIGN_OR_RETURN(std::vector<nlohmann::json> claims, reader_.listClaims(deadline));
  std::lock_guard lk(mu_);
  if (!rebuild_pending_) return okStatus();
  auto log = logger(Component::kKubelet);
  size_t rebuilt = 0, failed = 0;
  for (const nlohmann::json& doc : claims) {
    // A claim that does not decode was not prepared from here either.
    auto claim = kube::decodeResourceClaim(doc);
    if (!claim.ok()) continue;
    const kube::ObjectMeta& m = claim->metadata;
    const ClaimRef ref{.ns = m.ns, .uid = m.uid, .name = m.name};
    if (!checkRef(ref).ok() || checkpoint_.find(ref.uid) ||
        unprepared_before_rebuild_.contains(ref.uid)) {
      continue;
    }
    // Kubelet prepares a claim for the pods it is reserved for; one reserved for none was not
    // prepared here (or was unprepared already).
    const std::set<std::string> pods = reservedPods(*claim);
    auto results = ourAllocation(*claim, ref, opts_.driver, opts_.node);
    if (pods.empty() || !results.ok()) continue;
    auto r =
        renderClaim(ref, *results, *state_.current().value, renderOptions(podClaimNameOf(*claim)));
    if (r.ok()) r->prepared.pod_owned = ownedByPod(*claim);
    Status st = r.ok() ? commit(*r, pods, {}) : Status(r.error());
    if (st.ok()) {
      ++rebuilt;
    } else {
      ++failed;
      log->error("claim {}/{} ({}): cannot be prepared again from the API server: {}", ref.ns,
                 ref.name, ref.uid, st.error().msg);
    }
  }
  rebuild_pending_ = false;
  unprepared_before_rebuild_.clear();
  sweepUnowned();
  recovery_note_ += fmt::format("; rebuilt from the API server: {} claim(s) of this node{}",
                                rebuilt, failed ? fmt::format(", {} failed", failed) : "");
  log->warn("prepared-claims checkpoint rebuilt from the API server: {} claim(s), {} failed",
            rebuilt, failed);
  return okStatus();
}

Status ClaimPreparer::restoreSpec(const PreparedClaim& c) {
  RDMANET_ASSIGN_OR_RETURN(RenderedClaim r, renderClaim(c.ref, allocationOf(c),
                                                        *state_.current().value, renderOptions(c)));
  RDMANET_RETURN_IF_ERROR(writeClaimCdiSpec(c.cdi_spec, r.cdi));
  // The metadata files outlive a reboot (/var/lib), their specs do not: both written again.
  RDMANET_RETURN_IF_ERROR(writeClaimMetadata(metadataPlace(), c.ref.uid, r.metadata));
  // The pods' device records live on the same tmpfs as the spec: gone with it.
  if (opts_.pod_devices_dir.empty() || c.pods.empty()) return okStatus();
  return writePodDevices(opts_.pod_devices_dir, {c.pods.begin(), c.pods.end()}, c,
                         *state_.current().value);
}

void ClaimPreparer::restoreSpecs() {
  std::lock_guard lk(mu_);
  auto log = logger(Component::kKubelet);
  for (const auto& [uid, c] : checkpoint_.claims()) {
    if (onDisk(c)) continue;
    // After a reboot /var/run/cdi (a tmpfs) is empty while the checkpoint still lists the claim:
    // kubelet would hand the runtime CDI ids whose spec no longer exists.
    if (auto st = restoreSpec(c); st.ok()) {
      log->info("claim {}/{} ({}): its CDI spec was gone; written again", c.ref.ns, c.ref.name,
                uid);
    } else {
      log->error("claim {}/{} ({}): its CDI spec is gone and cannot be written again: {}", c.ref.ns,
                 c.ref.name, uid, st.error().msg);
    }
  }
}

std::vector<PreparedClaim> ClaimPreparer::preparedClaims() const {
  std::lock_guard lk(mu_);
  std::vector<PreparedClaim> out;
  out.reserve(checkpoint_.claims().size());
  for (const auto& [uid, c] : checkpoint_.claims()) out.push_back(c);
  return out;
}

size_t ClaimPreparer::preparedCount() const {
  std::lock_guard lk(mu_);
  return checkpoint_.claims().size();
}

Result<PreparedClaim> ClaimPreparer::answerFromCheckpoint(const PreparedClaim& c) {
  // The spec may be gone (a reboot emptied the tmpfs since start-up): make it again first.
  if (!onDisk(c)) RDMANET_RETURN_IF_ERROR(restoreSpec(c));
  return c;
}

Result<PreparedClaim> ClaimPreparer::prepare(const ClaimRef& ref, const Deadline& deadline,
                                             std::optional<ClaimPod>* pod) {
  RDMANET_RETURN_IF_ERROR(checkRef(ref));
  uint64_t unprepares_at_start = 0;
  std::optional<Result<PreparedClaim>> answered;
  {
    std::lock_guard lk(mu_);
    if (const PreparedClaim* c = checkpoint_.find(ref.uid)) {
      answered = answerFromCheckpoint(*c);
    } else {
      InFlight& f = in_flight_[ref.uid];
      ++f.prepares;
      unprepares_at_start = f.unprepares;
    }
  }
  if (answered) {
    // A claim a Pod owns is that pod's alone: no GET for it.
    if (answered->ok() && !answered->value().pod_owned) addReservedPods(ref, deadline);
    return std::move(*answered);
  }
  // However this call ends, it is no longer in flight.
  struct Done {
    ClaimPreparer& p;
    const std::string& uid;
    ~Done() {
      std::lock_guard lk(p.mu_);
      if (--p.in_flight_[uid].prepares == 0) p.in_flight_.erase(uid);
    }
  } done{*this, ref.uid};
  // Outside the lock: a slow GET must not hold up other claims.
  RDMANET_ASSIGN_OR_RETURN(nlohmann::json doc, reader_.getClaim(ref.ns, ref.name, deadline));
  auto decoded = kube::decodeResourceClaim(doc);
  if (!decoded.ok()) {
    return decoded.error().context(fmt::format("ResourceClaim {}/{}", ref.ns, ref.name));
  }
  const kube::ResourceClaim& claim = *decoded;
  // Whom a failure from here on concerns; not when the name now holds another claim.
  if (pod && claim.metadata.uid == ref.uid) *pod = onePodOf(claim);
  RDMANET_ASSIGN_OR_RETURN(auto results, ourAllocation(claim, ref, opts_.driver, opts_.node));
  std::lock_guard lk(mu_);
  // A concurrent call for the same claim may have finished meanwhile: answer the same.
  if (const PreparedClaim* c = checkpoint_.find(ref.uid)) return answerFromCheckpoint(*c);
  if (in_flight_[ref.uid].unprepares != unprepares_at_start) {
    return makeError(ErrorCode::kTryAgainLater,
                     fmt::format("claim {}/{}: unprepared while it was being prepared; nothing "
                                 "was prepared",
                                 ref.ns, ref.name));
  }
  if (tooLateToCommit(deadline, *opts_.clock)) return tooLate(ref, "while the claim was read");
  RDMANET_ASSIGN_OR_RETURN(RenderedClaim r, renderClaim(ref, results, *state_.current().value,
                                                        renderOptions(podClaimNameOf(claim))));
  r.prepared.pod_owned = ownedByPod(claim);
  RDMANET_RETURN_IF_ERROR(commit(r, reservedPods(claim), deadline));
  return std::move(r.prepared);
}

Status ClaimPreparer::commit(RenderedClaim& r, const std::set<std::string>& pods,
                             const Deadline& deadline) {
  const ClaimRef& ref = r.prepared.ref;
  // The commit, in this order: the spec, then the checkpoint entry that owns it (unprepare and
  // the start-up sweep find a spec without an entry by its file name).
  RDMANET_RETURN_IF_ERROR(writeClaimCdiSpec(r.prepared.cdi_spec, r.cdi));
  // What this commit wrote, removed again when a later step fails: nothing left behind.
  auto undo = [&] {
    if (!opts_.pod_devices_dir.empty()) (void)removePodDevices(opts_.pod_devices_dir, ref.uid);
    if (!r.metadata.empty()) (void)removeClaimMetadata(metadataPlace(), ref.uid);
    (void)removeClaimCdiSpec(r.prepared.cdi_spec);
  };
  if (tooLateToCommit(deadline, *opts_.clock)) {
    undo();
    return tooLate(ref, "while its CDI spec was written");
  }
  // The device metadata and the pods' device records (pod_devices.h) go between the two: like
  // the spec, a crash before the checkpoint entry leaves files that the start-up sweep removes
  // (no entry owns them).
  if (auto st = writeClaimMetadata(metadataPlace(), ref.uid, r.metadata); !st.ok()) {
    undo();
    return st.error();
  }
  if (!opts_.pod_devices_dir.empty()) {
    r.prepared.pods.assign(pods.begin(), pods.end());
    if (auto st = writePodDevices(opts_.pod_devices_dir, pods, r.prepared, *state_.current().value);
        !st.ok()) {
      undo();
      return st.error();
    }
  }
  if (auto st = checkpoint_.put(r.prepared); !st.ok()) {
    undo();
    return st.error();
  }
  return okStatus();
}

void ClaimPreparer::refreshReservations() {
  std::vector<ClaimRef> refs;
  {
    std::lock_guard lk(mu_);
    for (const auto& [uid, c] : checkpoint_.claims()) {
      if (!c.pod_owned) refs.push_back(c.ref);
    }
  }
  for (const ClaimRef& ref : refs) addReservedPods(ref, {});
}

void ClaimPreparer::addReservedPods(const ClaimRef& ref, const Deadline& deadline) {
  if (opts_.pod_devices_dir.empty()) return;
  auto log = logger(Component::kKubelet);
  // The answer is ready: the read must not make kubelet's call time out.
  Deadline read = deadline;
  if (read.at) *read.at -= 2 * kCommitMargin;
  auto claim = reader_.getClaim(ref.ns, ref.name, read);
  if (!claim.ok()) {
    log->warn(
        "claim {}/{}: cannot read its reservations again ({}); pods added since it was "
        "prepared have no device record yet",
        ref.ns, ref.name, claim.error().msg);
    return;
  }
  auto view = kube::decodeResourceClaim(*claim);
  if (!view.ok() || !ourAllocation(*view, ref, opts_.driver, opts_.node).ok()) {
    return;  // another claim now
  }
  const std::set<std::string> reserved = reservedPods(*view);
  std::lock_guard lk(mu_);
  const PreparedClaim* c = checkpoint_.find(ref.uid);
  if (c == nullptr) return;  // unprepared meanwhile
  std::set<std::string> added;
  for (const std::string& pod : reserved) {
    if (std::find(c->pods.begin(), c->pods.end(), pod) == c->pods.end()) added.insert(pod);
  }
  if (added.empty()) return;
  PreparedClaim next = *c;
  next.pods.insert(next.pods.end(), added.begin(), added.end());
  std::sort(next.pods.begin(), next.pods.end());
  // Records first, then the entry that lists them (a crash between leaves records of a
  // prepared claim, which unprepare removes with the rest).
  if (auto st = writePodDevices(opts_.pod_devices_dir, added, next, *state_.current().value);
      !st.ok()) {
    log->error("claim {}/{}: cannot write the device records of its new pods: {}", ref.ns, ref.name,
               st.error().msg);
    return;
  }
  if (auto st = checkpoint_.put(std::move(next)); !st.ok()) {
    log->error("claim {}/{}: {}", ref.ns, ref.name, st.error().msg);
    return;
  }
  log->info("claim {}/{}: device records written for {} pod(s) reserved since it was prepared",
            ref.ns, ref.name, added.size());
}

Status ClaimPreparer::unprepare(const ClaimRef& ref) {
  if (!isValidClaimUid(ref.uid)) {
    return makeError(ErrorCode::kInvalidConfig, "claim UID is empty or malformed");
  }
  std::lock_guard lk(mu_);
  if (rebuild_pending_) unprepared_before_rebuild_.insert(ref.uid);
  // A prepare of this claim still reading it must not commit after this: it would leave what
  // this unprepare removes.
  if (auto it = in_flight_.find(ref.uid); it != in_flight_.end()) ++it->second.unprepares;
  const PreparedClaim* c = checkpoint_.find(ref.uid);
  // The UID's own file too: a crash between the spec write and the checkpoint write left it.
  RDMANET_RETURN_IF_ERROR(removeClaimCdiSpec(opts_.cdi_dir / claimSpecFileName(ref.uid)));
  if (c) RDMANET_RETURN_IF_ERROR(removeClaimCdiSpec(c->cdi_spec));
  // By the UID, whether or not the entry says it has any: a crash before the entry left them.
  if (!opts_.metadata_dir.empty()) {
    RDMANET_RETURN_IF_ERROR(removeClaimMetadata(metadataPlace(), ref.uid));
  }
  if (!opts_.pod_devices_dir.empty()) {
    RDMANET_RETURN_IF_ERROR(removePodDevices(opts_.pod_devices_dir, ref.uid));
  }
  return checkpoint_.erase(ref.uid);
}

}  // namespace rdmanet::dp
