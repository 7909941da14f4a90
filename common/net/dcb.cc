#include "common/net/dcb.h"

#include <linux/dcbnl.h>

#include <algorithm>
#include <cstring>

#include "common/net/nlattr_view.h"

namespace rdmanet {
namespace {

Error malformed(const std::string& what) {
  return makeError(ErrorCode::kNetlinkFailure, "malformed RTM_GETDCB reply: " + what);
}

}  // namespace

TrustMode DcbState::trust() const {
  const bool any_dscp = std::any_of(apps.begin(), apps.end(), [](const DcbApp& a) {
    return a.selector == IEEE_8021QAZ_APP_SEL_DSCP;
  });
  return any_dscp ? TrustMode::kDscp : TrustMode::kPcp;
}

std::vector<uint8_t> DcbState::dscpsFor(int priority) const {
  std::vector<uint8_t> out;
  for (const DcbApp& a : apps) {
    if (a.selector == IEEE_8021QAZ_APP_SEL_DSCP && a.priority == priority && a.protocol < 64) {
      out.push_back(static_cast<uint8_t>(a.protocol));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<DcbState> parseDcbReply(std::span<const uint8_t> payload) {
  if (payload.size() < sizeof(dcbmsg)) return malformed("shorter than struct dcbmsg");
  dcbmsg hdr;
  std::memcpy(&hdr, payload.data(), sizeof(hdr));
  if (hdr.cmd != DCB_CMD_IEEE_GET) {
    return malformed("unexpected command " + std::to_string(hdr.cmd));
  }
  const auto attrs = payload.subspan(sizeof(dcbmsg));
  if (!nlattr::wellFormed(attrs)) return malformed("bad attribute header");
  DcbState state;
  auto ieee = nlattr::find(attrs, DCB_ATTR_IEEE);
  if (!ieee) return state;  // driver with DCB ops but no IEEE support: not an error
  state.supported = true;
  nlattr::Walker w(ieee->payload);
  while (auto a = w.next()) {
    if (a->type == DCB_ATTR_IEEE_PFC) {
      auto pfc = a->as<ieee_pfc>();
      if (!pfc) return malformed("DCB_ATTR_IEEE_PFC shorter than struct ieee_pfc");
      state.pfc_cap = pfc->pfc_cap;
      state.pfc_enabled = pfc->pfc_en;
    } else if (a->type == DCB_ATTR_IEEE_APP_TABLE) {
      nlattr::Walker aw(a->payload);
      while (auto app = aw.next()) {
        if (app->type != DCB_ATTR_IEEE_APP) continue;
        auto v = app->as<dcb_app>();
        if (!v) return malformed("DCB_ATTR_IEEE_APP shorter than struct dcb_app");
        state.apps.push_back(
            DcbApp{.selector = v->selector, .priority = v->priority, .protocol = v->protocol});
      }
      if (aw.malformed()) return malformed("bad DCB_ATTR_IEEE_APP_TABLE");
    }
  }
  if (w.malformed()) return malformed("bad DCB_ATTR_IEEE nest");
  return state;
}

}  // namespace rdmanet
