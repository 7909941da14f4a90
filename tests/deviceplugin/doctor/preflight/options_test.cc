// `rdmanet-doctor preflight`'s command line (deviceplugin/doctor/preflight/options.h).
#include "deviceplugin/doctor/preflight/options.h"

#include <gtest/gtest.h>

namespace rdmanet::doctor::preflight {
namespace {

std::vector<std::string> with(std::vector<std::string> extra) {
  std::vector<std::string> args = {"--image", "img:1", "--network", "rdma-vf"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(PreflightOptionsTest, DefaultsAreTheBriefs) {
  auto o = parsePreflightArgs(with({}));
  ASSERT_TRUE(o.ok()) << o.error().msg;
  EXPECT_EQ(o->resource, "rdma/vf");
  EXPECT_EQ(o->driver, "rdma.rdmanet.io");
  EXPECT_EQ(o->pairs, PairMode::kAuto);
  EXPECT_EQ(o->ns, "rdmanet");
  EXPECT_EQ(o->daemonNamespace(), "rdmanet");
  EXPECT_EQ(o->timeout_s, 300);
  EXPECT_EQ(o->count, 200);
  EXPECT_EQ(o->dscp, 26);
  EXPECT_EQ(o->priority, 3);
  EXPECT_EQ(o->daemon_metrics_port, 9109);
  EXPECT_EQ(o->bw_percent, 90);
  EXPECT_EQ(o->rtt_p99_max_us, 1000);
  EXPECT_EQ(o->rtt_spread_max, 4);
  EXPECT_EQ(o->rtt_p50_max_us, 0);
  EXPECT_EQ(o->loss_max, 0u);
  EXPECT_FALSE(o->mtu.has_value());
  EXPECT_EQ(o->probe_command,
            (std::vector<std::string>{"rdmanet-device-plugin", "doctor", "probe"}));
  EXPECT_EQ(o->nadOf("any"), (NadRef{.ns = "rdmanet", .name = "rdma-vf"}));
}

TEST(PreflightOptionsTest, NodeNetworksOverrideTheNetworkPerNode) {
  auto o = parsePreflightArgs(with({"--namespace",
                                    "team",
                                    "--node-network",
                                    "rdmanet-vm1=rdmanet/rdma-vf-1",
                                    "--node-network",
                                    "rdmanet-vm2=rdma-vf-2",
                                    "--nodes",
                                    "rdmanet-vm1,rdmanet-vm2",
                                    "--pairs",
                                    "ring",
                                    "--mtu",
                                    "1500",
                                    "--bw-percent",
                                    "85.5",
                                    "--probe-command",
                                    "/bin/probe  --x",
                                    "--daemon-namespace",
                                    "kube-system",
                                    "--rtt-p50-max-us",
                                    "50000",
                                    "--loss-max",
                                    "20"}));
  ASSERT_TRUE(o.ok()) << o.error().msg;
  EXPECT_EQ(o->nadOf("rdmanet-vm1"), (NadRef{.ns = "rdmanet", .name = "rdma-vf-1"}));
  // A bare NAD name is the pod's namespace, as Multus reads it, whatever the flags' order.
  EXPECT_EQ(o->nadOf("rdmanet-vm2"), (NadRef{.ns = "team", .name = "rdma-vf-2"}));
  EXPECT_EQ(o->nadOf("rdmanet-vm3"), (NadRef{.ns = "team", .name = "rdma-vf"}));
  EXPECT_EQ(o->nodes, (std::vector<std::string>{"rdmanet-vm1", "rdmanet-vm2"}));
  EXPECT_EQ(o->pairs, PairMode::kRing);
  EXPECT_EQ(o->mtu, 1500);
  EXPECT_EQ(o->bw_percent, 85.5);
  EXPECT_EQ(o->probe_command, (std::vector<std::string>{"/bin/probe", "--x"}));
  EXPECT_EQ(o->daemonNamespace(), "kube-system");
  EXPECT_EQ(o->rtt_p50_max_us, 50000);
  EXPECT_EQ(o->loss_max, 20u);
}

struct BadArgs {
  std::vector<std::string> args;
  std::string message;
};

class PreflightBadArgsTest : public ::testing::TestWithParam<BadArgs> {};

TEST_P(PreflightBadArgsTest, IsAUsageErrorNamingTheFlag) {
  auto o = parsePreflightArgs(GetParam().args);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(o.error().msg, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Flags, PreflightBadArgsTest,
    ::testing::Values(
        BadArgs{{"--network", "n"}, "--image: required (the image that holds the probe)"},
        BadArgs{{"--image", "i"},
                "--network: required (the NAD the probe pods attach as eth1), or --node-network"},
        BadArgs{with({"--node-network", "rdmanet-vm1"}),
                "--node-network: \"rdmanet-vm1\" is not NODE=[NS/]NAME"},
        BadArgs{with({"--node-network", "Bad_Node=nad"}),
                "--node-network: \"Bad_Node=nad\" is not NODE=[NS/]NAME"},
        BadArgs{with({"--node-network", "a=x/y/z"}),
                "--node-network: \"a=x/y/z\" is not NODE=[NS/]NAME"},
        BadArgs{with({"--node-network", "a=n1", "--node-network", "a=n2"}),
                "--node-network: node \"a\" is given twice"},
        BadArgs{{"--image", "i", "--network", "NS/nad"},
                "--network: \"NS/nad\" is not [NS/]NAME of a NAD"},
        BadArgs{with({"--pairs", "mesh"}), "--pairs: \"mesh\" is not ring or all"},
        BadArgs{with({"--bw-percent", "ninety"}),
                "--bw-percent: \"ninety\" is not a number in [0.1, 100]"},
        BadArgs{with({"--rtt-p99-max-us", "1ms"}),
                "--rtt-p99-max-us: \"1ms\" is not a number in [1, 1000000000]"},
        BadArgs{with({"--rtt-p50-max-us", "0"}),
                "--rtt-p50-max-us: \"0\" is not a number in [1, 1000000000]"},
        BadArgs{with({"--loss-max", "-1"}),
                "--loss-max: \"-1\" is not an integer in [0, 1000000000]"},
        BadArgs{with({"--timeout", "5m"}), "--timeout: \"5m\" is not an integer in [1, 86400]"},
        BadArgs{with({"--mtu", "100"}), "--mtu: \"100\" is not an integer in [576, 65535]"},
        BadArgs{with({"--nodes", "a,B"}), "--nodes: \"B\" is not a node name"},
        BadArgs{with({"--namespace", "my.ns"}), "--namespace: \"my.ns\" is not a namespace name"},
        BadArgs{with({"--claim-template", "T"}), "--claim-template: \"T\" is not an object name"},
        BadArgs{with({"--resource", "rdma/"}),
                "--resource: \"rdma/\" is not a resource name (domain/name)"},
        BadArgs{with({"--frob"}), "--frob: unknown flag (see --help)"}));

TEST(PreflightOptionsTest, HelpNamesThePrivilegedUseAndTheExitCodes) {
  const std::string help = preflightUsage();
  EXPECT_NE(help.find("Soft-RoCE"), std::string::npos) << help;
  EXPECT_NE(help.find("One pre-flight runs at a time"), std::string::npos) << help;
  EXPECT_NE(help.find("Exit 0: no FAIL; 1: a FAIL; 2:"), std::string::npos) << help;
  auto o = parsePreflightArgs({"--help"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
