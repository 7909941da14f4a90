#include "deviceplugin/dra/kubelet/checkpoint_recovery.h"

#include <fmt/format.h>

namespace rdmanet::dp {

Result<CheckpointRecovery> loadOrRecover(ClaimCheckpoint& cp) {
  const Status loaded = cp.load();
  if (loaded.ok()) return CheckpointRecovery{};
  RDMANET_ASSIGN_OR_RETURN(auto moved, cp.moveAside(cp.file()));
  const std::string head =
      fmt::format("prepared-claims checkpoint {} was unusable ({}); moved to {}",
                  cp.file().string(), loaded.error().msg, moved.string());
  auto restored = cp.loadBackup();
  if (restored.ok() && *restored) {
    RDMANET_RETURN_IF_ERROR(cp.rewrite());
    return CheckpointRecovery{
        .source = CheckpointRecovery::Source::kBackup,
        .note = fmt::format("{}; restored from the backup {} ({} claim(s))", head,
                            cp.backupFile().string(), cp.claims().size())};
  }
  std::string why = "no backup";
  if (!restored.ok()) {
    // A corrupt backup is moved aside too, so the next start does not try it again.
    auto b = cp.moveAside(cp.backupFile());
    why = fmt::format("the backup was unusable too ({}{})", restored.error().msg,
                      b.ok() ? "; moved to " + b->string() : std::string());
  }
  return CheckpointRecovery{
      .source = CheckpointRecovery::Source::kApi,
      .note = fmt::format("{}; {}: rebuilding from the API server", head, why)};
}

}  // namespace rdmanet::dp
