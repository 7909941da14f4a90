// The rtnetlink decoders with hand-built kernel-shaped bytes, including the SR-IOV VF list the
// host kernel cannot produce.
#include "common/net/rtnl_codec.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "tests/common/net/nl_bytes.h"

namespace rdmanet {
namespace {

using testing::NlBytes;

NlBytes linkHeader(int ifindex, unsigned flags) {
  ifinfomsg ifi{};
  ifi.ifi_index = ifindex;
  ifi.ifi_flags = flags;
  NlBytes b;
  b.raw(ifi);
  return b;
}

TEST(RtnlCodecTest, ParsesLinkAttributes) {
  const uint8_t mac[6] = {0x02, 1, 2, 3, 4, 5};
  const uint8_t perm[6] = {0x0c, 0x42, 0xa1, 0, 0, 9};
  NlBytes b = linkHeader(7, IFF_UP | IFF_LOWER_UP);
  b.str(IFLA_IFNAME, "ens1f0v3")
      .attr(IFLA_ADDRESS, mac, 6)
      .attr(IFLA_PERM_ADDRESS, perm, 6)
      .attr(IFLA_MTU, uint32_t{9000})
      .attr(IFLA_OPERSTATE, uint8_t{IF_OPER_UP})
      .attr(IFLA_LINK, uint32_t{4})
      .attr(IFLA_NUM_VF, uint32_t{8})
      .str(IFLA_PARENT_DEV_NAME, "0000:81:10.6")
      .str(IFLA_PARENT_DEV_BUS_NAME, "pci")
      .begin(IFLA_LINKINFO)
      .str(IFLA_INFO_KIND, "macvlan")
      .end();
  auto l = parseLinkMessage(b.bytes());
  ASSERT_TRUE(l.ok()) << l.error().msg;
  EXPECT_EQ(l->ifindex, 7);
  EXPECT_EQ(l->name, "ens1f0v3");
  EXPECT_EQ(l->mac.str(), "02:01:02:03:04:05");
  EXPECT_EQ(l->mtu, 9000u);
  EXPECT_TRUE(l->admin_up);
  EXPECT_TRUE(l->carrier);
  EXPECT_EQ(l->operstate, "up");
  EXPECT_EQ(l->parent_ifindex, 4);
  EXPECT_EQ(l->num_vfs, 8);
  EXPECT_EQ(l->parent_dev, "0000:81:10.6");
  EXPECT_EQ(l->perm_mac.str(), "0c:42:a1:00:00:09");
  EXPECT_EQ(l->kind, "macvlan");
}

TEST(RtnlCodecTest, InfinibandHardwareAddressLeavesMacZero) {
  uint8_t ib[20] = {0x80};
  NlBytes b = linkHeader(3, 0);
  b.str(IFLA_IFNAME, "ib0").attr(IFLA_ADDRESS, ib, sizeof(ib));
  auto l = parseLinkMessage(b.bytes());
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->mac.isZero());
}

TEST(RtnlCodecTest, TruncatedOrMalformedLinkIsCleanError) {
  NlBytes b = linkHeader(3, 0);
  b.str(IFLA_IFNAME, "eth0");
  auto bytes = b.bytes();
  EXPECT_FALSE(parseLinkMessage(std::span(bytes).first(8)).ok());  // shorter than ifinfomsg
  auto cut = bytes;
  cut.resize(cut.size() - 6);  // attribute claims more than remains
  auto r = parseLinkMessage(cut);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNetlinkFailure);
  NlBytes noname = linkHeader(3, 0);
  EXPECT_FALSE(parseLinkMessage(noname.bytes()).ok());
}

NlBytes vfEntry(NlBytes& b, uint32_t vf, const uint8_t mac[6], uint32_t vlan, uint32_t qos,
                uint16_t proto, bool spoof, bool trust, uint32_t state, uint32_t min,
                uint32_t max) {
  ifla_vf_mac m{};
  m.vf = vf;
  std::memcpy(m.mac, mac, 6);
  ifla_vf_vlan v{.vf = vf, .vlan = vlan, .qos = qos};
  ifla_vf_vlan_info vi{};
  vi.vf = vf;
  vi.vlan = vlan;
  vi.qos = qos;
  vi.vlan_proto = htons(proto);
  b.begin(IFLA_VF_INFO)
      .attr(IFLA_VF_MAC, m)
      .attr(IFLA_VF_VLAN, v)
      .begin(IFLA_VF_VLAN_LIST)
      .attr(IFLA_VF_VLAN_INFO, vi)
      .end()
      .attr(IFLA_VF_SPOOFCHK, ifla_vf_spoofchk{.vf = vf, .setting = spoof})
      .attr(IFLA_VF_TRUST, ifla_vf_trust{.vf = vf, .setting = trust})
      .attr(IFLA_VF_LINK_STATE, ifla_vf_link_state{.vf = vf, .link_state = state})
      .attr(IFLA_VF_RATE, ifla_vf_rate{.vf = vf, .min_tx_rate = min, .max_tx_rate = max})
      .end();
  return b;
}

TEST(RtnlCodecTest, ParsesVfInfoListLikeMlx5ReportsIt) {
  const uint8_t mac0[6] = {0x02, 0, 0, 0, 0, 0x10};
  const uint8_t mac1[6] = {0x02, 0, 0, 0, 0, 0x11};
  NlBytes b = linkHeader(4, IFF_UP);
  b.str(IFLA_IFNAME, "ens1f0").begin(IFLA_VFINFO_LIST);
  vfEntry(b, 1, mac1, 300, 5, ETH_P_8021AD, false, true, IFLA_VF_LINK_STATE_DISABLE, 10, 2000);
  vfEntry(b, 0, mac0, 0, 0, ETH_P_8021Q, true, false, IFLA_VF_LINK_STATE_AUTO, 0, 0);
  b.end();
  auto vfs = parseVfInfoList(b.bytes());
  ASSERT_TRUE(vfs.ok()) << vfs.error().msg;
  ASSERT_EQ(vfs->size(), 2u);
  EXPECT_EQ((*vfs)[0].index, 0);  // sorted by VF index
  EXPECT_TRUE((*vfs)[0].spoofchk);
  EXPECT_EQ((*vfs)[0].link_state, VfLinkState::kAuto);
  const VfInfo& v1 = (*vfs)[1];
  EXPECT_EQ(v1.index, 1);
  EXPECT_EQ(v1.mac.str(), "02:00:00:00:00:11");
  EXPECT_EQ(v1.vlan, 300);
  EXPECT_EQ(v1.qos, 5);
  EXPECT_EQ(v1.vlan_proto, ETH_P_8021AD);
  EXPECT_FALSE(v1.spoofchk);
  EXPECT_TRUE(v1.trust);
  EXPECT_EQ(v1.link_state, VfLinkState::kDisable);
  EXPECT_EQ(v1.min_tx_rate, 10u);
  EXPECT_EQ(v1.max_tx_rate, 2000u);
}

TEST(RtnlCodecTest, ReadsThePfsPerVfTrafficCountersAfterTheVfsOtherAttributes) {
  const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x12};
  ifla_vf_mac m{};
  m.vf = 4;
  std::memcpy(m.mac, mac, 6);
  NlBytes b = linkHeader(4, IFF_UP);
  b.str(IFLA_IFNAME, "ens1f0").begin(IFLA_VFINFO_LIST);
  // mlx5 puts IFLA_VF_STATS after the knobs; its counters are u64 with a pad attribute.
  b.begin(IFLA_VF_INFO)
      .attr(IFLA_VF_MAC, m)
      .begin(IFLA_VF_STATS)
      .attr(IFLA_VF_STATS_RX_PACKETS, uint64_t{11})
      .attr(IFLA_VF_STATS_TX_PACKETS, uint64_t{12})
      .attr(IFLA_VF_STATS_RX_BYTES, uint64_t{1} << 40)
      .attr(IFLA_VF_STATS_TX_BYTES, uint64_t{14})
      .attr(IFLA_VF_STATS_BROADCAST, uint64_t{99})
      .attr(IFLA_VF_STATS_RX_DROPPED, uint64_t{15})
      .attr(IFLA_VF_STATS_TX_DROPPED, uint64_t{16})
      .end()
      .end();
  vfEntry(b, 0, mac, 0, 0, ETH_P_8021Q, true, false, IFLA_VF_LINK_STATE_AUTO, 0, 0);
  b.end();
  auto vfs = parseVfInfoList(b.bytes());
  ASSERT_TRUE(vfs.ok()) << vfs.error().msg;
  ASSERT_EQ(vfs->size(), 2u);
  EXPECT_FALSE((*vfs)[0].traffic.has_value());  // igb-like: no stats reported
  ASSERT_TRUE((*vfs)[1].traffic.has_value());
  EXPECT_EQ((*vfs)[1].traffic, (VfTraffic{.rx_packets = 11,
                                          .tx_packets = 12,
                                          .rx_bytes = uint64_t{1} << 40,
                                          .tx_bytes = 14,
                                          .rx_dropped = 15,
                                          .tx_dropped = 16}));
}

// What the kernel sends for a driver without per-VF counters (igb): IFLA_VF_STATS in every VF's
// nest, every counter zero. That is no reading, not a VF that carried nothing.
TEST(RtnlCodecTest, VfStatsOfZerosOnlyAreNoReading) {
  const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x07};
  ifla_vf_mac m{};
  m.vf = 2;
  std::memcpy(m.mac, mac, 6);
  NlBytes b = linkHeader(4, IFF_UP);
  b.str(IFLA_IFNAME, "enp0s3").begin(IFLA_VFINFO_LIST);
  b.begin(IFLA_VF_INFO).attr(IFLA_VF_MAC, m).begin(IFLA_VF_STATS);
  for (int type : {IFLA_VF_STATS_RX_PACKETS, IFLA_VF_STATS_TX_PACKETS, IFLA_VF_STATS_RX_BYTES,
                   IFLA_VF_STATS_TX_BYTES, IFLA_VF_STATS_BROADCAST, IFLA_VF_STATS_MULTICAST,
                   IFLA_VF_STATS_RX_DROPPED, IFLA_VF_STATS_TX_DROPPED}) {
    b.attr(static_cast<uint16_t>(type), uint64_t{0});
  }
  b.end().end().end();
  auto vfs = parseVfInfoList(b.bytes());
  ASSERT_TRUE(vfs.ok()) << vfs.error().msg;
  ASSERT_EQ(vfs->size(), 1u);
  EXPECT_EQ((*vfs)[0].index, 2);
  EXPECT_FALSE((*vfs)[0].traffic.has_value());
}

TEST(RtnlCodecTest, LinkWithoutVfListHasNoVfs) {
  NlBytes b = linkHeader(2, 0);
  b.str(IFLA_IFNAME, "eth0");
  auto vfs = parseVfInfoList(b.bytes());
  ASSERT_TRUE(vfs.ok());
  EXPECT_TRUE(vfs->empty());
}

TEST(RtnlCodecTest, MalformedVfInfoIsCleanError) {
  NlBytes b = linkHeader(4, 0);
  b.str(IFLA_IFNAME, "ens1f0").begin(IFLA_VFINFO_LIST).begin(IFLA_VF_INFO);
  const uint16_t bogus[2] = {200, IFLA_VF_MAC};  // claims 200 bytes inside a tiny nest
  b.raw(bogus).end().end();
  EXPECT_FALSE(parseVfInfoList(b.bytes()).ok());
}

// Found by net_rtnl_fuzz: VF number 0x80000001 came out as index -2147483647, sorted after VF 0.
// SR-IOV's TotalVFs is a 16-bit field, so a larger VF number is no VF.
TEST(RtnlCodecTest, VfNumberBeyondSriovRangeIsCleanError) {
  const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x10};
  for (uint32_t vf : {0x10000u, 0x80000001u, 0xffffffffu}) {
    NlBytes b = linkHeader(4, 0);
    b.str(IFLA_IFNAME, "ens1f0").begin(IFLA_VFINFO_LIST);
    vfEntry(b, 0, mac, 0, 0, ETH_P_8021Q, true, false, IFLA_VF_LINK_STATE_AUTO, 0, 0);
    vfEntry(b, vf, mac, 0, 0, ETH_P_8021Q, true, false, IFLA_VF_LINK_STATE_AUTO, 0, 0);
    b.end();
    auto vfs = parseVfInfoList(b.bytes());
    ASSERT_FALSE(vfs.ok()) << vf;
    EXPECT_EQ(vfs.error().code, ErrorCode::kNetlinkFailure);
  }
  NlBytes b = linkHeader(4, 0);
  b.str(IFLA_IFNAME, "ens1f0").begin(IFLA_VFINFO_LIST);
  vfEntry(b, 0xffff, mac, 0, 0, ETH_P_8021Q, true, false, IFLA_VF_LINK_STATE_AUTO, 0, 0);
  b.end();
  auto vfs = parseVfInfoList(b.bytes());
  ASSERT_TRUE(vfs.ok());
  EXPECT_EQ((*vfs)[0].index, 0xffff);
}

TEST(RtnlCodecTest, ParsesAddressPreferringIfaLocal) {
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET;
  ifa.ifa_prefixlen = 24;
  ifa.ifa_index = 9;
  const uint8_t local[4] = {10, 0, 0, 2};
  const uint8_t peer[4] = {10, 0, 0, 1};
  NlBytes b;
  b.raw(ifa).attr(IFA_ADDRESS, peer, 4).attr(IFA_LOCAL, local, 4);
  auto a = parseAddrMessage(b.bytes());
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->ifindex, 9);
  EXPECT_EQ(a->prefix.str(), "10.0.0.2/24");
}

TEST(RtnlCodecTest, ParsesRouteAndSkipsOtherTables) {
  rtmsg rtm{};
  rtm.rtm_family = AF_INET6;
  rtm.rtm_dst_len = 64;
  rtm.rtm_table = RT_TABLE_MAIN;
  rtm.rtm_type = RTN_UNICAST;
  const auto dst = IpAddress::parse("fd00:88::").value();
  const auto gw = IpAddress::parse("fe80::1").value();
  NlBytes b;
  b.raw(rtm)
      .attr(RTA_DST, dst.bytes.data(), 16)
      .attr(RTA_GATEWAY, gw.bytes.data(), 16)
      .attr(RTA_OIF, uint32_t{5});
  auto r = parseRouteMessage(b.bytes());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->dst.str(), "fd00:88::/64");
  EXPECT_EQ((*r)->gateway->str(), "fe80::1");
  EXPECT_EQ((*r)->ifindex, 5);
  rtm.rtm_table = RT_TABLE_LOCAL;
  NlBytes local;
  local.raw(rtm).attr(RTA_OIF, uint32_t{5});
  auto skipped = parseRouteMessage(local.bytes());
  ASSERT_TRUE(skipped.ok());
  EXPECT_FALSE(skipped->has_value());
}

// A qdisc dump entry as sch_tbf's tbf_dump() writes it: TCA_KIND, then TCA_OPTIONS holding
// TCA_TBF_PARMS (the rate clamped to 32 bits) and, above 2^32-1 bytes/s, TCA_TBF_RATE64.
NlBytes qdiscEntry(int ifindex, uint32_t parent, const std::string& kind, uint64_t rate) {
  tcmsg tcm{};
  tcm.tcm_family = AF_UNSPEC;
  tcm.tcm_ifindex = ifindex;
  tcm.tcm_handle = 0x80010000;
  tcm.tcm_parent = parent;
  tc_tbf_qopt qopt{};
  qopt.rate.rate = static_cast<uint32_t>(std::min<uint64_t>(rate, UINT32_MAX));
  qopt.rate.linklayer = TC_LINKLAYER_ETHERNET;
  NlBytes b;
  b.raw(tcm).str(TCA_KIND, kind).begin(TCA_OPTIONS).attr(TCA_TBF_PARMS, qopt);
  if (rate > UINT32_MAX) b.attr(TCA_TBF_RATE64, rate);
  b.end();
  return b;
}

TEST(RtnlCodecTest, RootTbfRateReadsThe32And64BitRates) {
  EXPECT_EQ(parseRootTbfRate(qdiscEntry(7, TC_H_ROOT, "tbf", 125'000'000).bytes(), 7),
            125'000'000u);               // 1 Gbit/s
  const uint64_t fast = 50'000'000'000;  // 400 Gbit/s in bytes/s: beyond 32 bits
  EXPECT_EQ(parseRootTbfRate(qdiscEntry(7, TC_H_ROOT, "tbf", fast).bytes(), 7), fast);
}

TEST(RtnlCodecTest, RootTbfRateIgnoresOtherLinksParentsAndKinds) {
  EXPECT_EQ(parseRootTbfRate(qdiscEntry(8, TC_H_ROOT, "tbf", 1000).bytes(), 7), std::nullopt);
  EXPECT_EQ(parseRootTbfRate(qdiscEntry(7, 0x00010001, "tbf", 1000).bytes(), 7), std::nullopt);
  EXPECT_EQ(parseRootTbfRate(qdiscEntry(7, TC_H_ROOT, "fq_codel", 1000).bytes(), 7), std::nullopt);
}

TEST(RtnlCodecTest, RootTbfRateOfACutOrEmptyEntryIsNone) {
  const std::vector<uint8_t> whole = qdiscEntry(7, TC_H_ROOT, "tbf", 1000).bytes();
  // Every prefix: short of the tcmsg, of TCA_KIND, of TCA_OPTIONS, of the parms.
  for (size_t n = 0; n < whole.size(); ++n) {
    const std::span<const uint8_t> cut(whole.data(), n);
    EXPECT_EQ(parseRootTbfRate(cut, 7), std::nullopt) << n << " of " << whole.size() << " bytes";
  }
  tcmsg tcm{};
  tcm.tcm_ifindex = 7;
  tcm.tcm_parent = TC_H_ROOT;
  NlBytes no_options;
  no_options.raw(tcm).str(TCA_KIND, "tbf");
  EXPECT_EQ(parseRootTbfRate(no_options.bytes(), 7), std::nullopt);
}

}  // namespace
}  // namespace rdmanet
