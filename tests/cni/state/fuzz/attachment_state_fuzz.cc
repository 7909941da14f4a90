// libFuzzer target over AttachmentState::fromJson (cni/state/attachment_state.h), as DEL, CHECK
// and GC read a state file: parsed within the state limits, then decoded (seeds: state files
// that ADD writes in each mode, and a torn one). Invariants: no crash, no exception; a state
// that decodes encodes to JSON that decodes again to the same identity and mode.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cni/conf/json_util.h"
#include "cni/conf/limits.h"
#include "cni/state/attachment_state.h"

using namespace rdmanet::cni;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto doc = parseJson(std::string_view(reinterpret_cast<const char*>(data), size), kStateLimits);
  if (!doc.ok()) return 0;
  auto st = AttachmentState::fromJson(*doc);
  if (!st.ok()) return 0;
  auto again = AttachmentState::fromJson(st->toJson());
  if (!again.ok() || again->container_id != st->container_id || again->ifname != st->ifname ||
      again->mode != st->mode || again->pci != st->pci) {
    __builtin_trap();
  }
  (void)dumpJson(st->toJson());
  return 0;
}
