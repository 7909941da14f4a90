#pragma once
// A prepared claim's device metadata on disk (device_metadata.h says what and where): written by
// prepare between the claim's CDI spec and its checkpoint entry, removed by unprepare, written
// again when a reboot took the specs (/var/run/cdi is a tmpfs), swept at start-up when no
// checkpoint entry owns it (a crash before the entry was written).
//
// The files are the container's to read: 0644 in directories made 0755 (as upstream's helper
// makes them), replaced atomically (common/os/atomic_file.h: a container started meanwhile never
// mounts half a file) and fsynced, like the checkpoint beside them that says they exist. Each
// directory below <plugin dir>/dra-device-metadata is opened without following symlinks
// (common/os/confined_path.h), and every name in a path was checked before (the claim UID, the
// request). The CDI specs are written as the claim's own (pools/cdi.h: 0600, fsynced).

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/dra/kubelet/device_metadata.h"

namespace rdmanet::dp {

// Where the files and their specs are: <plugin dir>/dra-device-metadata, the CDI dir, and the
// driver, which names the specs.
struct MetadataPlace {
  std::filesystem::path dir{};
  std::filesystem::path cdi_dir{};
  std::string driver{};
};

// Writes each request's file, then its CDI spec. On failure what it wrote of the claim is
// removed again (removeClaimMetadata) and the error returned (5 naming the path).
Status writeClaimMetadata(const MetadataPlace& at, std::string_view claim_uid,
                          const std::vector<RequestMetadata>& requests);

// Removes the claim's files and specs, whichever requests they were for; none is success. Error
// 5 when one cannot be removed.
Status removeClaimMetadata(const MetadataPlace& at, std::string_view claim_uid);

// Whether each request's file and spec are there.
bool claimMetadataPresent(const MetadataPlace& at, std::string_view claim_uid,
                          const std::vector<std::string>& requests);

// Removes the files and specs of claims not in `owned` (UIDs), and in the owned claims'
// directories the temp files of writes a crash cut short. Returns how many claims' files it
// removed. Never fails: what cannot be removed now is left for the next start.
int sweepClaimMetadata(const MetadataPlace& at, const std::set<std::string>& owned);

}  // namespace rdmanet::dp
