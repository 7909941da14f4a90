#include "cni/state/ownership.h"

#include <fmt/format.h>

#include "common/os/read_file.h"

namespace rdmanet::cni {
namespace {

// The device as the other attachments would name it: the PCI function, else the host name.
bool sameDevice(const AttachmentState& a, const AttachmentState& b) {
  if (a.mode == Mode::kMacvlan || b.mode == Mode::kMacvlan) return false;  // shares its master
  if (!a.pci.empty() || !b.pci.empty()) return a.pci == b.pci;
  return !a.host_ifname.empty() && a.host_ifname == b.host_ifname;
}

// Whether `other` took the device after `st` did: a record written after ours is the newer
// owner's; an older one is stale itself (its DEL never came) and does not hold ours back.
bool isNewer(const StateStore& store, const AttachmentState& other, const AttachmentState& st,
             const std::string& boot_id) {
  if (!other.boot_id.empty() && !boot_id.empty() && other.boot_id != boot_id) return false;
  if (!st.boot_id.empty() && st.boot_id == other.boot_id) return other.added_ns > st.added_ns;
  if (st.boot_id.empty() && !other.boot_id.empty()) return true;  // ours predates boot ids
  // Records of older CNIs: by when their files were written (a record rebuilt without a file
  // is the oldest).
  const auto ours = store.savedAt(st.container_id, st.ifname);
  const auto theirs = store.savedAt(other.container_id, other.ifname);
  return theirs && (!ours || *theirs > *ours);
}

}  // namespace

std::string readBootId(const std::filesystem::path& file) {
  auto text = readFile(file, 128, Symlink::kFollow);
  if (!text.ok() || !text->has_value()) return "";
  std::string id = **text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

std::string whyNotOurs(const StateStore& store, const AttachmentState& st,
                       const std::string& boot_id) {
  if (st.mode == Mode::kMacvlan) return "";
  if (!st.boot_id.empty() && !boot_id.empty() && st.boot_id != boot_id) {
    return fmt::format("it was recorded in an earlier boot ({}; now {})", st.boot_id, boot_id);
  }
  for (const AttachmentState& other : store.list()) {
    if (other.container_id == st.container_id && other.ifname == st.ifname) continue;
    if (sameDevice(st, other) && isNewer(store, other, st, boot_id)) {
      return fmt::format("{}/{} holds it now", other.container_id, other.ifname);
    }
  }
  return "";
}

}  // namespace rdmanet::cni
