// libFuzzer target over the rtnetlink decoders (common/net/rtnl_codec.h) and the attribute
// walker under them (nlattr_view.h): the input is the payload after struct nlmsghdr of an
// RTM_NEWLINK, RTM_NEWADDR or RTM_NEWROUTE reply, fed to every decoder (the seeds are replies
// captured from the kernel, make_seeds.py). Invariants: no crash, no read out of bounds; a link
// that decodes has a name; VFs come sorted by index.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/net/nlattr_view.h"
#include "common/net/rtnl_codec.h"

using namespace rdmanet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  (void)nlattr::wellFormed(bytes);
  nlattr::Walker w(bytes);
  while (auto a = w.next()) {
    (void)a->str();
    (void)a->as<uint64_t>();
    (void)nlattr::wellFormed(a->payload);
  }
  if (auto link = parseLinkMessage(bytes); link.ok() && link->name.empty()) __builtin_trap();
  (void)operstateName(size > 0 ? data[0] : 0);
  if (auto vfs = parseVfInfoList(bytes); vfs.ok()) {
    for (size_t i = 1; i < vfs->size(); ++i) {
      if ((*vfs)[i - 1].index > (*vfs)[i].index) __builtin_trap();
    }
  }
  (void)parseAddrMessage(bytes);
  (void)parseRouteMessage(bytes);
  return 0;
}
