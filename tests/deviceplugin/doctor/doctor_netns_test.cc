// The real binary's DCB path against the real kernel: the data ports exist as veths in a
// throw-away netns and rdmanet-doctor runs inside it (ip netns exec), so LibnlNetlink sends a
// real RTM_GETDCB. veth has no dcbnl_ops (and this host kernel has no DCB at all): the answer
// must be "driver does not report DCB" -> UNKNOWN, and a name absent from the netns -> UNKNOWN
// "port not in this network namespace". Root only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/deviceplugin/doctor/doctor_node.h"
#include "tests/deviceplugin/doctor/run_command.h"

namespace rdmanet::doctor {
namespace {

using testing::DoctorNode;

class DoctorNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (creates a netns and veths)";
    ns_ = "rdmanet-doctor-" + std::to_string(::getpid());
    ASSERT_EQ(std::system(("ip netns add " + ns_).c_str()), 0);
    created_ = true;
  }
  void TearDown() override {
    if (created_) (void)std::system(("ip netns del " + ns_ + " 2>/dev/null").c_str());
  }
  void addVeth(const std::string& name, int mtu) {
    const std::string cmd = "ip -n " + ns_ + " link add " + name + " mtu " + std::to_string(mtu) +
                            " type veth peer name " + name + "p mtu " + std::to_string(mtu) +
                            " && ip -n " + ns_ + " link set " + name + " up";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::string ns_;
  bool created_ = false;
};

TEST_F(DoctorNetnsTest, RealRtmGetdcbOnAPortWithoutDcbIsUnknown) {
  DoctorNode node;
  for (const auto& p : {"ens1f0", "ens1f1", "ens2f0"}) addVeth(p, 9000);  // ens2f1 absent
  const auto [rc, out] = testing::runCommand("ip netns exec " + ns_ + " " + RDMANET_DOCTOR_BIN +
                                             " --json --sysfs-root " + node.root().string());
  EXPECT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out);
  int seen = 0;
  for (const auto& c : j["checks"]) {
    if (c["check"] != "pfc") continue;
    ++seen;
    EXPECT_EQ(c["verdict"], "UNKNOWN") << c.dump();
    const std::string expect = c["device"] == "ens2f1"
                                   ? "port not in this network namespace"
                                   : "driver does not report DCB (no IEEE DCB attributes)";
    EXPECT_EQ(c["evidence"]["dcb"], expect) << c.dump();
  }
  EXPECT_EQ(seen, 4);
}

}  // namespace
}  // namespace rdmanet::doctor
