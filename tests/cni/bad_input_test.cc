// The bad-input battery, end to end through runCni(): every case gets the right code, a message
// that names the problem, and leaves nothing behind (links, VF settings, RDMA, state, leases).
#include <atomic>
#include <thread>

#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

struct BadInput {
  const char* name;
  std::string conf;
  int code;
  std::string needle;
  std::map<std::string, std::string> env{};  // overrides; "" value = unset
};
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class BadInputTest : public PluginTest, public ::testing::WithParamInterface<BadInput> {};

// Size and depth extremes (cni/conf/limits.h).
std::string nestedArrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }
std::string nestedObjects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += R"({"a":)";
  return s + "1" + std::string(depth, '}');
}
std::string repeated(const std::string& item, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + item;
  return s + "]";
}

#define HEAD R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet", )"
const BadInput kBattery[] = {
    {"MalformedJson", R"({"cniVersion": "1.0.0", "master": )", 6, "parse"},
    {"WrongType", HEAD R"("master": ["ens1f0"]})", 7, "master"},
    {"VlanOutOfRange", HEAD R"("master": "ens1f0", "vlan": 5000})", 7, "vlan"},
    {"QosOutOfRange", HEAD R"("deviceID": "0000:81:10.0", "vlan": 5, "vlanQoS": 9})", 7, "vlanQoS"},
    {"MtuOutOfRange", HEAD R"("master": "ens1f0", "mtu": 1})", 7, "mtu"},
    {"UnknownMode", HEAD R"("master": "ens1f0", "mode": "l3s"})", 2, "mode"},
    {"DeviceIdNotPci", HEAD R"("deviceID": "mlx5_0"})", 7, "deviceID"},
    {"DeviceIdTraversal", HEAD R"("deviceID": "0000:81:10.0/../../../../etc"})", 7, "deviceID"},
    {"IpamTypeWithSlash", HEAD R"("master": "ens1f0", "ipam": {"type": "../sbin/init"}})", 7,
     "ipam.type"},
    {"UnsupportedVersion", R"({"cniVersion": "0.2.0", "master": "ens1f0"})", 1, "0.2.0"},
    {"NoContainerId",
     HEAD R"("master": "ens1f0"})",
     4,
     "CNI_CONTAINERID",
     {{"CNI_CONTAINERID", ""}}},
    {"NoIfname", HEAD R"("master": "ens1f0"})", 4, "CNI_IFNAME", {{"CNI_IFNAME", ""}}},
    {"NoNetns", HEAD R"("master": "ens1f0"})", 4, "CNI_NETNS", {{"CNI_NETNS", ""}}},
    {"NoPath", HEAD R"("master": "ens1f0"})", 4, "CNI_PATH", {{"CNI_PATH", ""}}},
    {"NoCommand", HEAD R"("master": "ens1f0"})", 4, "CNI_COMMAND", {{"CNI_COMMAND", ""}}},
    {"IfnameTooLong",
     HEAD R"("master": "ens1f0"})",
     4,
     "CNI_IFNAME",
     {{"CNI_IFNAME", "net1234567890123"}}},
    {"NetnsTraversal",
     HEAD R"("master": "ens1f0"})",
     4,
     "CNI_NETNS",
     {{"CNI_NETNS", "/var/run/netns/../../../etc/passwd"}}},
    {"NetnsMissing",
     HEAD R"("master": "ens1f0"})",
     3,
     "netns",
     {{"CNI_NETNS", "/var/run/netns/nope"}}},
    {"ModeDeviceMismatch", HEAD R"("mode": "sriov", "deviceID": "0000:82:00.0"})", 7,
     "not an SR-IOV VF"},
    {"VfKnobOnMacvlan", HEAD R"("master": "ens1f0", "trust": "on"})", 7, "trust"},
    {"UnknownCniArg", HEAD R"("master": "ens1f0"})", 4, "CNI_ARGS", {{"CNI_ARGS", "FOO=bar"}}},
    {"HundredThousandNestedArrays",
     HEAD R"("master": "ens1f0", "x": )" + nestedArrays(100000) + "}", 7, "nests deeper"},
    {"HundredThousandNestedObjects",
     HEAD R"("master": "ens1f0", "x": )" + nestedObjects(100000) + "}", 7, "nests deeper"},
    {"OneLevelTooDeepInIpam",
     HEAD R"("master": "ens1f0", "ipam": {"type": "fake-ipam", "x": )" +
         nestedArrays(kMaxJsonDepth - 1) + "}}",
     7, "nests deeper than the limit of 64"},
    {"FiveMiBString", HEAD R"("master": "ens1f0", "x": ")" + std::string(5 << 20, 'a') + "\"}", 7,
     "exceeds the limit of 1048576 bytes"},
    {"StringOverTheLimit",
     HEAD R"("master": "ens1f0", "x": ")" + std::string(kMaxJsonStringBytes + 1, 'a') + "\"}", 7,
     "string is 65537 bytes"},
    {"KeyOverTheLimit",
     HEAD R"("master": "ens1f0", ")" + std::string(kMaxJsonStringBytes + 1, 'k') + "\": 1}", 7,
     "key is 65537 bytes"},
    {"NumbersThatGrowPastTheLimitWhenWrittenOut",
     HEAD R"("master": "ens1f0", "x": )" + repeated("1e14", 80000) + "}", 7, "written out"},
};
#undef HEAD

TEST_P(BadInputTest, GetsTheRightCodeAUsefulMessageAndNoLeftovers) {
  const BadInput& b = GetParam();
  const World before = world();
  std::map<std::string, std::string> env = {{"CNI_COMMAND", "ADD"},
                                            {"CNI_CONTAINERID", "c1"},
                                            {"CNI_NETNS", kPod},
                                            {"CNI_IFNAME", "net1"},
                                            {"CNI_PATH", "/opt/cni/bin"}};
  for (const auto& [k, v] : b.env) {
    if (v.empty()) {
      env.erase(k);
    } else {
      env[k] = v;
    }
  }
  const Invocation out = runCni(
      *deps_,
      [&](const char* k) -> std::optional<std::string> {
        auto it = env.find(k);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      b.conf);
  ASSERT_NE(out.exit_code, 0);
  const json err = json::parse(out.stdout_data);
  EXPECT_EQ(err["code"], b.code) << out.stdout_data;
  EXPECT_TRUE(err.contains("cniVersion"));
  EXPECT_NE((err.value("msg", "") + err.value("details", "")).find(b.needle), std::string::npos)
      << out.stdout_data;
  EXPECT_EQ(world(), before) << dumpWorld(world());
  EXPECT_EQ(ipam_.count("ADD"), 0);
}

INSTANTIATE_TEST_SUITE_P(Battery, BadInputTest, ::testing::ValuesIn(kBattery),
                         [](const auto& info) { return info.param.name; });

// Concurrent ADD/DEL of macvlans sharing one host VLAN device, each thread with its own netlink
// (as separate processes would have): the VLAN device exists exactly while someone uses it.
TEST(SharedVlanConcurrencyTest, TheLastDelRemovesTheVlanDeviceAndNoOtherDoes) {
  TestNode n;
  constexpr int kPods = 8;
  for (int i = 0; i < kPods; ++i) {
    n.runner_.addNetns("/var/run/netns/p" + std::to_string(i), "p" + std::to_string(i));
  }
  const std::string conf =
      n.macvlanConf(R"(, "vlan": 300, "lossless": {"priority": 3, "check": "off"})");
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < kPods; ++i) {
      threads.emplace_back([&, i] {
        FakeNetlink host(n.kernel_);
        FakeNetnsRunner runner(n.kernel_);
        runner.addNetns("/var/run/netns/p" + std::to_string(i), "p" + std::to_string(i));
        Logger log;
        log.setLevel(LogLevel::kOff);
        PluginDeps deps{.host = host,
                        .runner = runner,
                        .ipam = n.ipam_,
                        .sysfs = n.deps_->sysfs,
                        .store = n.deps_->store,
                        .log = log,
                        .lock_timeout = std::chrono::milliseconds(3000)};
        const std::string cid = "c" + std::to_string(i);
        std::map<std::string, std::string> env = {
            {"CNI_CONTAINERID", cid},
            {"CNI_NETNS", "/var/run/netns/p" + std::to_string(i)},
            {"CNI_IFNAME", "net1"},
            {"CNI_PATH", "/x"}};
        auto lookup = [&](const char* k) -> std::optional<std::string> {
          auto it = env.find(k);
          if (it == env.end()) return std::nullopt;
          return it->second;
        };
        for (const char* cmd : {"ADD", "DEL"}) {
          env["CNI_COMMAND"] = cmd;
          if (runCni(deps, lookup, conf).exit_code != 0) ++failures;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_FALSE(n.kernel_.link(FakeKernel::kHost, "ens1f0.300").has_value()) << "round " << round;
    EXPECT_TRUE(n.world().state_files.empty()) << dumpWorld(n.world());
  }
}

}  // namespace
}  // namespace rdmanet::cni::testing
