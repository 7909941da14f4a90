#pragma once
// Whether DEL may still touch an attachment's device: the record may be stale. After a reboot
// the state dir survives while the device comes back fresh and may be another pod's; in the
// same boot a DEL can come long after the netns went and the device was given out again. A
// stale DEL that restored the VF's knobs would put the new owner's traffic on VLAN 0, and its
// pod-info removal would take the new owner's files. So before touching the device DEL checks:
// - the boot: a record from an earlier boot (boot_id) names a device whose state the reboot
//   reset; nothing of it is restored, and its pod info is not the record's any more;
// - the other attachments: a state file of another container or interface that holds the same
//   device (PCI function, or host name when it has none) means it is theirs now.
// Records of older CNIs have no boot id: the second check is all that protects them.

#include <filesystem>
#include <string>

#include "cni/state/attachment_state.h"
#include "cni/state/state_store.h"

namespace rdmanet::cni {

inline constexpr const char* kBootIdFile = "/proc/sys/kernel/random/boot_id";

// The boot id in `file` (trimmed), "" when it cannot be read.
std::string readBootId(const std::filesystem::path& file);

// Why the device of `st` is not the record's to touch any more ("" when it is): `boot_id` is the
// current boot's ("" unknown: not compared).
std::string whyNotOurs(const StateStore& store, const AttachmentState& st,
                       const std::string& boot_id);

}  // namespace rdmanet::cni
