#include "deviceplugin/dra/kubelet/metadata_files.h"

#include <fmt/format.h>

#include "common/os/atomic_file.h"
#include "common/os/confined_path.h"
#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"

namespace rdmanet::dp {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFileName = "metadata.json";

// "<driver>_metadata_<uid>_": a claim's spec names start with it. The UID holds no '_', so
// no other claim's do.
std::string specPrefix(const MetadataPlace& at, std::string_view uid) {
  return fmt::format("{}_metadata_{}_", at.driver, uid);
}

Status writeRequest(const MetadataPlace& at, std::string_view uid, const RequestMetadata& r) {
  RDMANET_ASSIGN_OR_RETURN(
      Fd dir, openConfinedDir(at.dir, (at.dir / uid / r.request).string(), /*create=*/true, 0755));
  const ConfinedFile file{.dir = std::move(dir), .name = std::string(kFileName)};
  RDMANET_RETURN_IF_ERROR(
      writeFileAtomic(file.viaFd(), r.content, {.mode = 0644, .durable = true}));
  return writeCdiSpecFile(r.cdi_spec, metadataCdiKind(at.driver), {r.cdi}, {.durable = true});
}

}  // namespace

Status writeClaimMetadata(const MetadataPlace& at, std::string_view claim_uid,
                          const std::vector<RequestMetadata>& requests) {
  for (const RequestMetadata& r : requests) {
    if (auto st = writeRequest(at, claim_uid, r); !st.ok()) {
      (void)removeClaimMetadata(at, claim_uid);  // nothing left behind
      return st.error().context("device metadata");
    }
  }
  return okStatus();
}

Status removeClaimMetadata(const MetadataPlace& at, std::string_view claim_uid) {
  // The UID goes into the paths: only one kubelet could have sent (isValidClaimUid).
  if (!isValidClaimUid(claim_uid)) {
    return makeError(ErrorCode::kInvalidConfig, "claim UID is empty or malformed");
  }
  // The specs first: a spec that mounts a file no longer there fails the container at start.
  const std::string prefix = specPrefix(at, claim_uid);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(at.cdi_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".json")) {
      RDMANET_RETURN_IF_ERROR(removeClaimCdiSpec(e.path()));
    }
  }
  // remove_all removes a symlink in the way, never what it points to.
  const fs::path claim_dir = at.dir / claim_uid;
  fs::remove_all(claim_dir, ec);
  if (ec) {
    return errnoError(ErrorCode::kIoFailure, ec.value(),
                      fmt::format("cannot remove {}", claim_dir.string()));
  }
  return okStatus();
}

bool claimMetadataPresent(const MetadataPlace& at, std::string_view claim_uid,
                          const std::vector<std::string>& requests) {
  std::error_code ec;
  for (const std::string& r : requests) {
    if (!fs::exists(at.dir / claim_uid / r / kFileName, ec) ||
        !fs::exists(at.cdi_dir / metadataSpecFileName(at.driver, claim_uid, r), ec)) {
      return false;
    }
  }
  return true;
}

int sweepClaimMetadata(const MetadataPlace& at, const std::set<std::string>& owned) {
  std::set<std::string> orphans;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(at.dir, ec)) {
    const std::string uid = e.path().filename().string();
    if (!isValidClaimUid(uid) || e.is_symlink(ec)) continue;  // not ours to judge
    if (!owned.contains(uid)) {
      orphans.insert(uid);
      continue;
    }
    for (const auto& req : fs::directory_iterator(e.path(), ec)) {
      if (req.is_directory(ec) && !req.is_symlink(ec)) (void)sweepAtomicTemps(req.path());
    }
  }
  const std::string kind_prefix = fmt::format("{}_metadata_", at.driver);
  for (const auto& e : fs::directory_iterator(at.cdi_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(kind_prefix) || !name.ends_with(".json")) continue;
    const std::string rest = name.substr(kind_prefix.size());
    const std::string uid = rest.substr(0, rest.find('_'));
    if (isValidClaimUid(uid) && !owned.contains(uid)) orphans.insert(uid);
  }
  int removed = 0;
  for (const std::string& uid : orphans) {
    if (removeClaimMetadata(at, uid).ok()) ++removed;
  }
  return removed;
}

}  // namespace rdmanet::dp
