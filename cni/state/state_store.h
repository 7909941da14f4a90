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

// How the CNI writes its files (common/os/atomic_file.h): updates without fsync. The rename
// makes an update atomic for readers and survives a crash of the plugin; what a power loss could
// lose of an update (state of attachments whose pods, netns and VF settings the reboot wipes
// too) is not worth a disk flush on every step. The first write of an attachment's file is
// durable (kCniFirstWrite): unsynced, a power loss can leave it empty, and DEL would find a torn
// file where the rename promised a whole one.
inline constexpr AtomicWriteOptions kCniWrite{.mode = 0600, .durable = false};
inline constexpr AtomicWriteOptions kCniFirstWrite{.mode = 0600, .durable = true};

class StateStore {
 public:
  explicit StateStore(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }

  // Creates the directory tree (0700) if needed.
  Status ensure() const;

  Status save(const AttachmentState& st) const;
  // nullopt when there is no state for the attachment. A file that does not parse (empty or cut
  // short by a power loss, not a state document) is error 5, or, with `torn` given, nullopt
  // with *torn set: DEL treats it as no state.
  Result<std::optional<AttachmentState>> load(const std::string& container_id,
                                              const std::string& ifname,
                                              bool* torn = nullptr) const;
  // When the attachment's file was last written (nullopt: no file): which of two records of one
  // device is the newer (cni/state/ownership.h).
  std::optional<std::filesystem::file_time_type> savedAt(const std::string& container_id,
                                                         const std::string& ifname) const;
  // Success when already gone.
  Status remove(const std::string& container_id, const std::string& ifname) const;
  // Every attachment with state (GC), sorted. Files that cannot be read or parsed are left out;
  // with `torn` given, the names ("<containerid>_<ifname>") of those that do not parse go there.
  std::vector<AttachmentState> list(std::vector<std::string>* torn = nullptr) const;
  // Removes a state file by its name as list() gives it; success when already gone.
  Status removeTorn(const std::string& name) const;
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
  std::vector<AttachmentState> listMatching(const std::string& prefix,
                                            std::vector<std::string>* torn) const;
  std::filesystem::path dir_;
  mutable bool ensured_ = false;  // the tree exists (checked once per process)
};

}  // namespace rdmanet::cni
