#pragma once
// StateStore: per-attachment state (container id + ifname) in a directory, and the shared-VLAN
// reference sets of the macvlan mode.
//
// Layout under the state dir (0700, default /var/lib/cni/rdmanet, RDMANET_STATE_DIR in tests):
//   <containerid>_<ifname>.json   one attachment (files 0600, written atomically: temp file +
//                                 rename, so a reader sees the old or the new file whole)
//   locks/<name>.lock             flock files (device_lock.h), removed by their holder
//   *.rdmanet-tmp.<tid>           temp files of writes in progress (common/os/atomic_file.h), in
//                                 any of these directories; sweepStale() removes dead writers'
//   vlan/<link>.json              which attachments use a shared host VLAN device
//   ipam/<type>.json              the CNI versions an IPAM delegate accepts (cache)
// Container ids and ifnames are validated before they get here (env.h), so they are safe file
// name parts. All failures are error 5 (state directory I/O).

#include <sys/types.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cni/state/attachment_state.h"
#include "common/base/result.h"
#include "common/os/atomic_file.h"

namespace rdmanet::cni {

// How the CNI writes its files (common/os/atomic_file.h): no fsync. The rename makes an update
// atomic for readers and survives a crash of the plugin; what a power loss could lose (state of
// attachments whose pods, netns and VF settings the reboot wipes too) is not worth a disk flush
// on every pod start.
inline constexpr AtomicWriteOptions kCniWrite{.mode = 0600, .durable = false};

class StateStore {
 public:
  explicit StateStore(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }

  // Creates the directory tree (0700) if needed.
  Status ensure() const;

  Status save(const AttachmentState& st) const;
  // nullopt when there is no state for the attachment.
  Result<std::optional<AttachmentState>> load(const std::string& container_id,
                                              const std::string& ifname) const;
  // Success when already gone.
  Status remove(const std::string& container_id, const std::string& ifname) const;
  // Every attachment with state (GC), sorted. Unreadable files are skipped.
  std::vector<AttachmentState> list() const;
  // The attachments of one container (its other networks), sorted; reads only its files.
  std::vector<AttachmentState> listContainer(const std::string& container_id) const;

  // Small JSON documents by relative path ("vlan/ens1f0.100.json"); nullopt if absent.
  Result<std::optional<nlohmann::json>> readDoc(const std::string& rel) const;
  Status writeDoc(const std::string& rel, const nlohmann::json& doc) const;
  Status removeDoc(const std::string& rel) const;

  std::filesystem::path lockPath(const std::string& name) const;

  // Removes the temp and lock files of processes that died holding them (common/os/held_file.h)
  // from
  // every directory of the store. Returns how many.
  int sweepStale() const;

 private:
  std::filesystem::path fileFor(const std::string& container_id, const std::string& ifname) const;
  std::vector<AttachmentState> listMatching(const std::string& prefix) const;
  std::filesystem::path dir_;
  mutable bool ensured_ = false;  // the tree exists (checked once per process)
};

}  // namespace rdmanet::cni
