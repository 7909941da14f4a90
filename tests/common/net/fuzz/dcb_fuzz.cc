// libFuzzer target over the DCB codec (common/net/dcb.h): the input is an RTM_GETDCB reply's
// payload (struct dcbmsg + attributes; seeds built from the <linux/dcbnl.h> layout, make_seeds.py).
// Invariants: no crash; a reply that decodes answers trust() and dscpsFor() for every priority.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/net/dcb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto s = rdmanet::parseDcbReply(std::span<const uint8_t>(data, size));
  if (!s.ok()) return 0;
  (void)s->trust();
  for (int p = 0; p < 8; ++p) {
    (void)s->pfcOn(p);
    (void)s->dscpsFor(p);
  }
  return 0;
}
