#pragma once
// DCB (Data Center Bridging) state of a port, and the byte-level codec for RTM_GETDCB.
//
// libnl has no DCB module, so LibnlNetlink builds the request with libnl's core message API and
// hands the reply payload to parseDcbReply(), which is tested byte for byte here because no
// virtual driver implements DCB.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/base/result.h"

namespace rdmanet {

// One IEEE APP table entry (struct dcb_app).
struct DcbApp {
  uint8_t selector = 0;  // IEEE_8021QAZ_APP_SEL_DSCP (5), _ETHERTYPE (1), ...
  uint8_t priority = 0;
  uint16_t protocol = 0;  // the DSCP value for selector 5
  bool operator==(const DcbApp&) const = default;
};

enum class TrustMode { kPcp, kDscp };

struct DcbState {
  bool supported = false;    // false: the driver answered without IEEE DCB attributes
  uint8_t pfc_enabled = 0;   // bit p set = PFC enabled on priority p (ieee_pfc.pfc_en)
  uint8_t pfc_cap = 0;       // ieee_pfc.pfc_cap
  std::vector<DcbApp> apps;  // DCB_ATTR_IEEE_APP_TABLE

  bool pfcOn(int priority) const { return (pfc_enabled >> priority) & 1; }
  // DSCP trust when the APP table holds any DSCP entry (what mlnx_qos / dcb show as trust dscp).
  TrustMode trust() const;
  // DSCP values that map to `priority`, sorted.
  std::vector<uint8_t> dscpsFor(int priority) const;
};

// Parses the payload after struct nlmsghdr of an RTM_GETDCB reply (struct dcbmsg + attributes).
// A reply without DCB_ATTR_IEEE yields supported == false. Error 101 on malformed bytes.
Result<DcbState> parseDcbReply(std::span<const uint8_t> payload);

}  // namespace rdmanet
