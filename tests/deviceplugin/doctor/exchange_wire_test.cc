// The probe's tcp exchange, its pure part: the hello's wire format (round trip, and what a
// wrong peer gets told), the choice of device and GID in the order probe.h gives, the MTU
// search, the new flags and the MTU verdicts, and the --summary-file object. The sockets and
// verbs around them run against Soft-RoCE on the VM cluster (tests/cluster/multinode.sh, the
// pre-flight).
#include "deviceplugin/doctor/probe/exchange_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "deviceplugin/doctor/probe/probe.h"

namespace rdmanet::doctor {
namespace {

using exchange::DeviceCandidate;
using exchange::InterfaceFacts;
using ::testing::HasSubstr;

TEST(ExchangeHello, RoundTripsEveryField) {
  exchange::Hello h{.qpn = 0x123456,
                    .psn = 0xabcdef,
                    .addr = 0x00007f0012345678ull,
                    .rkey = 0xdeadbeef,
                    .len = 65536,
                    .netdev_mtu = 1500,
                    .active_mtu = 3};
  for (size_t i = 0; i < 16; ++i) h.gid[i] = static_cast<uint8_t>(i * 7);
  const auto bytes = exchange::encodeHello(h);
  ASSERT_EQ(bytes.size(), exchange::kHelloBytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "RDPX");
  EXPECT_EQ(bytes[8], 0x00);  // big-endian QP number
  EXPECT_EQ(bytes[9], 0x12);
  auto back = exchange::decodeHello(bytes);
  ASSERT_TRUE(back.ok()) << back.error().msg;
  EXPECT_EQ(*back, h);
}

TEST(ExchangeHello, AWrongPeerIsToldWhatIsWrong) {
  auto bytes = exchange::encodeHello({});
  EXPECT_THAT(exchange::decodeHello({bytes.begin(), bytes.begin() + 10}).error().msg,
              HasSubstr("sent 10 bytes, not a 64-byte probe hello"));
  auto http = bytes;
  std::copy_n("GET ", 4, http.begin());
  EXPECT_THAT(exchange::decodeHello(http).error().msg, HasSubstr("no \"RDPX\""));
  auto v2 = bytes;
  v2[4] = 2;
  EXPECT_THAT(exchange::decodeHello(v2).error().msg,
              HasSubstr("speaks probe exchange version 2, this probe 1"));
}

TEST(ExchangeGid, Ipv4MappedSpelling) {
  EXPECT_EQ(exchange::ipv4MappedGid("192.168.78.1"), "0000:0000:0000:0000:0000:ffff:c0a8:4e01");
  EXPECT_EQ(exchange::ipv4MappedGid("fe80::1"), "");
  EXPECT_EQ(exchange::ipv4MappedGid(""), "");
}

PortFacts portWith(std::vector<PortGid> gids) {
  PortFacts p;
  p.gids = std::move(gids);
  return p;
}

TEST(ExchangeGid, PicksTheInterfacesRoceV2GidThenAnyIpv4ThenAny) {
  const PortGid link{0, "fe80:0000:0000:0000:5054:00ff:fe12:3456", GidType::kRoceV1, ""};
  const PortGid link2{1, "fe80:0000:0000:0000:5054:00ff:fe12:3456", GidType::kRoceV2, ""};
  const PortGid v4a{2, "0000:0000:0000:0000:0000:ffff:0a38:0001", GidType::kRoceV2, ""};
  const PortGid v4b{3, "0000:0000:0000:0000:0000:ffff:c0a8:4e01", GidType::kRoceV2, ""};
  EXPECT_EQ(exchange::pickGid(portWith({link, link2, v4a, v4b}), -1, "192.168.78.1")->index, 3);
  EXPECT_EQ(exchange::pickGid(portWith({link, link2, v4a, v4b}), -1, "10.1.1.1")->index, 2);
  EXPECT_EQ(exchange::pickGid(portWith({link, link2}), -1, "")->index, 1);
  EXPECT_EQ(exchange::pickGid(portWith({link, link2, v4a}), 0, "")->index, 0);
  auto none = exchange::pickGid(portWith({link}), -1, "10.1.1.1");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().msg, HasSubstr("no RoCE v2 GID"));
  EXPECT_THAT(exchange::pickGid(portWith({link}), 5, "").error().msg,
              HasSubstr("no valid GID at index 5"));
}

TEST(ExchangeDevice, MacToEui64FlipsTheLocalBit) {
  EXPECT_EQ(exchange::macToEui64Guid("52:54:00:12:34:56"), "5054:00ff:fe12:3456");
  EXPECT_EQ(exchange::macToEui64Guid("02:00:00:00:00:01"), "0000:00ff:fe00:0001");
  EXPECT_EQ(exchange::macToEui64Guid("52:54:00:12:34"), "");
  EXPECT_EQ(exchange::macToEui64Guid("52:54:00:12:34:5g"), "");
}

TEST(ExchangeDevice, TheRulesInOrder) {
  const InterfaceFacts eth1{.name = "eth1", .ipv4 = "10.56.1.5", .mac = "52:54:00:12:34:56"};
  const DeviceCandidate mine_by_ip{.name = "mlx5_3",
                                   .node_guid = "1111:2222:3333:4444",
                                   .has_roce_v2 = true,
                                   .gids = {"0000:0000:0000:0000:0000:ffff:0a38:0105"}};
  const DeviceCandidate mine_by_guid{.name = "rxe7",
                                     .node_guid = "5054:00ff:fe12:3456",
                                     .has_roce_v2 = true,
                                     .gids = {"0000:0000:0000:0000:0000:ffff:c0a8:4e07"}};
  const DeviceCandidate other{.name = "rxe8",
                              .node_guid = "5054:00ff:fe99:9999",
                              .has_roce_v2 = true,
                              .gids = {"0000:0000:0000:0000:0000:ffff:c0a8:4e08"}};
  // --device, then NCCL_IB_HCA (its first entry, without "=" and ":port").
  EXPECT_EQ(*exchange::pickDevice("rxe8", "=mlx5_3:1", {mine_by_ip, other}, eth1), "rxe8");
  EXPECT_EQ(*exchange::pickDevice("", "=mlx5_3:1,mlx5_4", {other, mine_by_ip}, eth1), "mlx5_3");
  EXPECT_THAT(exchange::pickDevice("", "=mlx5_9", {other}, eth1).error().msg,
              HasSubstr("NCCL_IB_HCA names mlx5_9, which this container does not see"));
  EXPECT_THAT(exchange::pickDevice("mlx5_9", "", {other}, eth1).error().msg,
              HasSubstr("no RDMA device mlx5_9"));
  // The interface's address in a GID, then its MAC in the node GUID, then the only RoCE v2 one.
  EXPECT_EQ(*exchange::pickDevice("", "", {other, mine_by_ip, mine_by_guid}, eth1), "mlx5_3");
  EXPECT_EQ(*exchange::pickDevice("", "", {other, mine_by_guid}, eth1), "rxe7");
  EXPECT_EQ(*exchange::pickDevice("", "", {other}, eth1), "rxe8");
  auto two = exchange::pickDevice("", "", {other, {.name = "rxe9", .has_roce_v2 = true}}, eth1);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_THAT(two.error().msg, HasSubstr("cannot tell which RDMA device belongs to eth1 "
                                         "(10.56.1.5): candidates rxe8, rxe9; give --device"));
  EXPECT_THAT(exchange::pickDevice("", "", {}, {}).error().msg, HasSubstr("no device is listed"));
}

TEST(ExchangeMtu, LargestCrossingFindsTheEdge) {
  int calls = 0;
  const auto below = [&calls](int edge) {
    return [&calls, edge](int s) {
      ++calls;
      return s <= edge;
    };
  };
  EXPECT_EQ(exchange::largestCrossing(92, 1500, below(1000)), 1000);
  EXPECT_LE(calls, 12);
  EXPECT_EQ(exchange::largestCrossing(92, 1500, below(1500)), 1500);
  EXPECT_EQ(exchange::largestCrossing(92, 1500, below(92)), 92);
  EXPECT_EQ(exchange::largestCrossing(92, 1500, below(50)), std::nullopt);
  EXPECT_EQ(exchange::largestCrossing(10, 5, below(50)), std::nullopt);
}

TEST(ProbeExchangeArgs, NewFlagsAndTheirLimits) {
  auto c = parseProbeArgs({"10.0.0.2", "--exchange", "tcp", "--gid-index", "3", "--interface",
                           "eth1", "--wait-device", "120", "--mtu-sweep", "--summary-file",
                           "/dev/termination-log"});
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->exchange, "tcp");
  EXPECT_EQ(c->gid_index, 3);
  EXPECT_EQ(c->interface, "eth1");
  EXPECT_EQ(c->wait_device_s, 120);
  EXPECT_TRUE(c->mtu_sweep);
  EXPECT_EQ(c->summary_file, "/dev/termination-log");
  EXPECT_EQ(parseProbeArgs({"a"})->exchange, "cm");
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"a", "--exchange", "udp"}, "--exchange"},
      {{"a", "--gid-index", "2"}, "--gid-index is for --exchange tcp"},
      {{"a", "--exchange", "tcp", "--gid-index", "-1"}, "--gid-index"},
      {{"a", "--exchange", "tcp", "--interface", "a/b"}, "--interface: not an interface name"},
      {{"a", "--interface", std::string(16, 'i')}, "--interface: not an interface name"},
      {{"a", "--wait-device", "3601"}, "--wait-device"},
      {{"a", "--wait-device", "5"}, "--wait-device and --interface are for --exchange tcp"},
      {{"--listen", "--interface", "eth1"}, "are for --exchange tcp"},
      {{"a", "--summary-file", "relative"}, "--summary-file: not an absolute path"},
      {{"--listen", "--mtu-sweep"}, "--mtu-sweep and --summary-file are for the client"},
      {{"--listen", "--summary-file", "/x"}, "are for the client"},
  };
  for (const auto& [args, mentions] : bad) {
    auto o = parseProbeArgs(args);
    ASSERT_FALSE(o.ok()) << mentions;
    EXPECT_THAT(o.error().msg, HasSubstr(mentions));
  }
}

ProbeReport measured() {
  ProbeReport r{.peer = "10.56.2.5", .device = "rxe1", .traffic_class = 104, .expected_dscp = 26};
  r.count = 3;
  r.rtt_us = {30, 10, 20};
  r.local_mtu = 1500;
  r.peer_mtu = 1500;
  r.mtu_run = true;
  r.path_mtu = 1500;
  r.roce_mtu = 1024;
  return r;
}

TEST(ProbeMtuVerdict, EqualEndsAndAFullPathPass) {
  ProbeReport r = measured();
  judgeProbe(r);
  EXPECT_TRUE(r.pass) << testing::PrintToString(r.problems);
}

TEST(ProbeMtuVerdict, EndsThatDifferFail) {
  ProbeReport r = measured();
  r.peer_mtu = 1000;
  r.path_mtu = 1000;
  judgeProbe(r);
  ASSERT_FALSE(r.pass);
  EXPECT_THAT(r.problems.front(), HasSubstr("MTUs differ (1500 here, 1000 at the peer)"));
}

TEST(ProbeMtuVerdict, APathBelowBothEndsFailsAndNothingCrossingFails) {
  ProbeReport r = measured();
  r.path_mtu = 1400;
  judgeProbe(r);
  ASSERT_FALSE(r.pass);
  EXPECT_THAT(r.problems.front(),
              HasSubstr("only 1400-byte packets cross, though both ends' interfaces take 1500"));
  r = measured();
  r.path_mtu = 0;
  judgeProbe(r);
  EXPECT_THAT(r.problems.front(), HasSubstr("no UDP packet crossed"));
}

TEST(ProbeSummary, OneLineWithEveryFieldAndUnderFourKiB) {
  ProbeReport r = measured();
  r.counters_delta = {{"rcvd_seq_err", 4}, {"sent_pkts", 900}};
  judgeProbe(r);
  const std::string s = renderProbeSummary(r);
  EXPECT_EQ(s.find('\n'), std::string::npos);
  auto j = nlohmann::json::parse(s);
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["pass"], true);
  EXPECT_EQ(j["rtt_p50_us"], 20);
  EXPECT_EQ(j["rtt_p99_us"], 30);
  EXPECT_EQ(j["rtt_max_us"], 30);
  EXPECT_EQ(j["rtts"], 3);
  EXPECT_EQ(j["path_mtu"], 1500);
  EXPECT_EQ(j["roce_mtu"], 1024);
  EXPECT_EQ(j["traffic_class"], 104);
  EXPECT_EQ(j["counters_delta"]["rcvd_seq_err"], 4);
  // A huge error and many counters are cut, not let past kubelet's 4 KiB.
  r.failed_stage = "ping";
  r.error = std::string(10000, 'e');
  for (int i = 0; i < 300; ++i) r.counters_delta["counter_" + std::to_string(i)] = 1;
  judgeProbe(r);
  const std::string big = renderProbeSummary(r);
  EXPECT_LE(big.size(), kSummaryMaxBytes);
  EXPECT_EQ(nlohmann::json::parse(big)["failed_stage"], "ping");
}

}  // namespace
}  // namespace rdmanet::doctor

namespace rdmanet::doctor {
namespace {

TEST(ProbeClientReport, CarriesWhatTheOptionsAskFor) {
  auto o = parseProbeArgs({"10.0.0.2", "--dscp", "24", "--priority", "5", "--count", "7"});
  ASSERT_TRUE(o.ok());
  const ProbeReport r = clientReport(*o);
  EXPECT_EQ(r.peer, "10.0.0.2");
  EXPECT_EQ(r.expected_dscp, 24);
  EXPECT_EQ(r.expected_priority, 5);
  EXPECT_EQ(r.requested_tos, 96);
  EXPECT_EQ(r.count, 7);
  EXPECT_TRUE(r.failed_stage.empty());
}

}  // namespace
}  // namespace rdmanet::doctor
