// LibnlNetlink::dcb(): RTM_GETDCB with DCB_CMD_IEEE_GET. libnl has no DCB module, so the request
// is built with the core message API and the reply decoded by parseDcbReply().
#include <linux/dcbnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <sys/socket.h>

#include "common/net/libnl_netlink.h"
#include "common/net/libnl_socket.h"

namespace rdmanet {

Result<DcbState> LibnlNetlink::dcb(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
    return errnoError(ErrorCode::kNetlinkFailure, EINVAL,
                      "invalid interface name \"" + ifname + "\"");
  }
  dcbmsg hdr{};
  hdr.dcb_family = AF_UNSPEC;
  hdr.cmd = DCB_CMD_IEEE_GET;
  auto msg = nl::newMsg(RTM_GETDCB, 0, &hdr, sizeof(hdr));
  nla_put_string(msg.get(), DCB_ATTR_IFNAME, ifname.c_str());
  RDMANET_ASSIGN_OR_RETURN(auto a,
                           nl::transactOne<DcbState>(sock_, msg.get(), RTM_GETDCB, parseDcbReply));
  // EOPNOTSUPP: a kernel without CONFIG_DCB (no RTM_GETDCB handler) or a driver without
  // dcbnl_ops. Either way the port has no DCB to report, which is a state, not a failure.
  if (a.outcome.err == EOPNOTSUPP) return DcbState{};
  if (a.outcome.err != 0) return nl::refusal(a.outcome, "reading DCB of \"" + ifname + "\"");
  return std::move(a.value).value_or(DcbState{});
}

}  // namespace rdmanet
