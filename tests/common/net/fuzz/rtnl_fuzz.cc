// libFuzzer target over the rtnetlink decoders (common/net/rtnl_codec.h) and the attribute
// walker under them (nlattr_view.h): the input is the payload after struct nlmsghdr of an
// RTM_NEWLINK, RTM_NEWADDR, RTM_NEWROUTE or RTM_NEWQDISC reply, fed to every decoder (the seeds
// are replies captured from the kernel, make_seeds.py). Invariants: no crash, no read out of
// bounds; a link that decodes has a name; VFs come sorted by index; a root TBF's rate is read
// only for the link its tcmsg names.
#include <cstddef>
#include <cstdint>
#include <cstring>
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
  // The qdisc decoder, asked about the link the bytes name (tcmsg's tcm_ifindex at offset 4) and
  // about another one, which it must never answer for.
  int ifindex = 0;
  if (size >= 8) std::memcpy(&ifindex, data + 4, sizeof(ifindex));
  (void)parseRootTbfRate(bytes, ifindex);
  if (parseRootTbfRate(bytes, ifindex ^ 1)) __builtin_trap();
  return 0;
}
