// LibnlNetlink: egress shaping, a TBF qdisc as a link's root (`tc qdisc replace dev X root tbf`).
//
// The request is built by hand, as every other here, not with libnl-route's rtnl_qdisc_tbf_*:
// those take the rate as an int of bytes/s, at most ~17 Gbit/s, and a share of a 100G or 400G
// port is often more. The kernel reads a rate above 2^32-1 bytes/s from TCA_TBF_RATE64
// (sch_tbf.c, as iproute2 sends it), and the bucket from TCA_TBF_BURST in bytes, so no rate
// table and no tick conversion is needed (a rate spec with an Ethernet link layer has none). The
// dump's replies are decoded in rtnl_codec.h (parseRootTbfRate), fuzzed with the other decoders.
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <sys/socket.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <span>

#include "common/net/libnl_netlink.h"
#include "common/net/libnl_socket.h"
#include "common/net/rtnl_codec.h"

namespace rdmanet {
namespace {

constexpr uint64_t kBytesPerMbit = 1'000'000 / 8;
// The bucket, bytes: TBF sends a packet only when the bucket holds all of it, and segments a GSO
// packet larger than the bucket (slow), so it holds a 64 KiB GSO/TSO packet at any rate; and at
// least 1 ms of the rate, so that the delay before TBF's watchdog (an hrtimer, not a jiffy)
// fires again and the softirq's latency do not keep the link below its rate. (rate/HZ is no
// bound here: the watchdog is not tied to HZ.) Both are far above any MTU.
constexpr uint64_t kMinBurstBytes = uint64_t{64} * 1024;
constexpr uint64_t kBurstMs = 1;
// The queue, bytes beyond the bucket: 5 ms of the rate. Enough that a TCP flow's burst waits
// instead of being dropped, short enough that the pod's latency does not grow by more than
// that when it sends above its share (a long queue is only buffer bloat).
constexpr uint64_t kQueueMs = 5;

uint32_t clampU32(uint64_t v) {
  return static_cast<uint32_t>(std::min<uint64_t>(v, std::numeric_limits<uint32_t>::max()));
}

tcmsg rootOf(int ifindex) {
  tcmsg tcm{};
  tcm.tcm_family = AF_UNSPEC;
  tcm.tcm_ifindex = ifindex;
  tcm.tcm_handle = 0;  // the kernel picks one
  tcm.tcm_parent = TC_H_ROOT;
  return tcm;
}

}  // namespace

Status LibnlNetlink::setEgressRate(int ifindex, uint32_t mbps) {
  const std::string what = "setting a " + std::to_string(mbps) + " Mbit/s TBF root qdisc on link " +
                           std::to_string(ifindex);
  if (mbps == 0) return errnoError(ErrorCode::kNetlinkFailure, EINVAL, what);
  const uint64_t rate = uint64_t{mbps} * kBytesPerMbit;  // bytes/s
  const uint32_t burst = clampU32(std::max(kMinBurstBytes, rate * kBurstMs / 1000));
  tc_tbf_qopt qopt{};
  qopt.rate.rate = clampU32(rate);  // the whole rate in TCA_TBF_RATE64 when above
  qopt.rate.linklayer = TC_LINKLAYER_ETHERNET;
  qopt.limit = clampU32(uint64_t{burst} + rate * kQueueMs / 1000);

  tcmsg tcm = rootOf(ifindex);
  auto msg = nl::newMsg(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, &tcm, sizeof(tcm));
  nl_msg* m = msg.get();
  nla_put_string(m, TCA_KIND, "tbf");
  ::nlattr* options = nla_nest_start(m, TCA_OPTIONS);
  nla_put(m, TCA_TBF_PARMS, sizeof(qopt), &qopt);
  if (rate > std::numeric_limits<uint32_t>::max()) nla_put_u64(m, TCA_TBF_RATE64, rate);
  nla_put_u32(m, TCA_TBF_BURST, burst);
  nla_nest_end(m, options);
  return nl::request(sock_, m, what);
}

Result<std::optional<uint64_t>> LibnlNetlink::egressRate(int ifindex) {
  RDMANET_ASSIGN_OR_RETURN(LinkInfo link, linkByIndex(ifindex));  // 100 for a missing link
  std::optional<uint64_t> rate;
  RDMANET_RETURN_IF_ERROR(nl::dump(
      sock_,
      [] {
        tcmsg tcm{};
        return nl::newMsg(RTM_GETQDISC, NLM_F_DUMP, &tcm, sizeof(tcm));
      },
      [&] { rate.reset(); },
      [&](const nlmsghdr& h, std::span<const uint8_t> p) -> Status {
        if (h.nlmsg_type != RTM_NEWQDISC) return okStatus();
        if (auto r = parseRootTbfRate(p, link.ifindex)) rate = r;
        return okStatus();
      },
      "dumping qdiscs"));
  if (!rate) return std::optional<uint64_t>();
  return std::optional<uint64_t>(*rate / kBytesPerMbit);
}

}  // namespace rdmanet
