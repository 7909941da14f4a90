// VLAN and SR-IOV VF operations against the real kernel. This host kernel has neither 8021q nor
// SR-IOV, so these skip here with the reason; the VM harness runs the same binary on a kernel
// that has them:
// - VLAN tests detect 8021q support (addVlan -> EOPNOTSUPP means "no 8021q") and skip.
// - VF tests need a real PF: set RDMANET_TEST_PF=<pf netdev in the current namespace> (e.g. an
//   emulated igb PF with sriov_numvfs >= 1). They restore every knob they change.
#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "tests/common/net/libnl_fixture.h"

namespace rdmanet::testing {
namespace {

using LibnlVlanTest = LibnlNetnsTest;

TEST_F(LibnlVlanTest, CreatesVlanWithProtocolAndEgressQosMap) {
  VlanSpec spec;
  spec.name = "va.100";
  spec.link_ifindex = index("va");
  spec.vlan_id = 100;
  spec.proto = ETH_P_8021Q;
  spec.egress_qos = {{0, 3}, {5, 5}};
  auto r = nl_->addVlan(spec);
  if (!r.ok() && r.error().sys_errno == EOPNOTSUPP) {
    GTEST_SKIP() << "kernel has no 8021q (VLAN) support: " << r.error().msg
                 << "; the VM harness runs this test on a kernel that has it";
  }
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto l = nl_->linkByIndex(*r);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->kind, "vlan");
  EXPECT_EQ(l->parent_ifindex, spec.link_ifindex);
  const std::string details = ipDetails("va.100");
  EXPECT_NE(details.find("vlan protocol 802.1Q id 100"), std::string::npos) << details;
  EXPECT_NE(details.find("0:3"), std::string::npos) << details;
  EXPECT_NE(details.find("5:5"), std::string::npos) << details;
  spec.name = "va.dup";
  auto dup = nl_->addVlan(spec);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().sys_errno, EEXIST);
}

TEST_F(LibnlVlanTest, CreatesQinQVlan) {
  VlanSpec spec;
  spec.name = "va.ad";
  spec.link_ifindex = index("va");
  spec.vlan_id = 200;
  spec.proto = ETH_P_8021AD;
  auto r = nl_->addVlan(spec);
  if (!r.ok() && r.error().sys_errno == EOPNOTSUPP) {
    GTEST_SKIP() << "kernel has no 8021q (VLAN) support; runs in the VM harness";
  }
  ASSERT_TRUE(r.ok()) << r.error().msg;
  const std::string details = ipDetails("va.ad");
  EXPECT_NE(details.find("vlan protocol 802.1ad id 200"), std::string::npos) << details;
}

// VF tests run in the caller's namespace, where the PF lives.
class LibnlVfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* pf = std::getenv("RDMANET_TEST_PF");
    if (!pf || !*pf) {
      GTEST_SKIP() << "needs a real SR-IOV PF: set RDMANET_TEST_PF=<pf netdev> (the VM harness "
                      "does; this host kernel has no SR-IOV)";
    }
    if (!isRoot()) GTEST_SKIP() << "VF test needs root";
    auto nl = LibnlNetlink::open();
    ASSERT_TRUE(nl.ok());
    nl_ = std::move(*nl);
    auto link = nl_->linkByName(pf);
    ASSERT_TRUE(link.ok()) << link.error().msg;
    pf_ = link->ifindex;
    auto vfs = nl_->vfs(pf_);
    ASSERT_TRUE(vfs.ok()) << vfs.error().msg;
    ASSERT_FALSE(vfs->empty()) << pf << " has no VFs: set sriov_numvfs first";
    before_ = (*vfs)[0];
  }
  void TearDown() override {
    if (!nl_) return;
    (void)nl_->setVfMac(pf_, 0, before_.mac);
    (void)nl_->setVfVlan(pf_, 0, before_.vlan, before_.qos, before_.vlan_proto);
    (void)nl_->setVfSpoofchk(pf_, 0, before_.spoofchk);
    (void)nl_->setVfTrust(pf_, 0, before_.trust);
    (void)nl_->setVfLinkState(pf_, 0, before_.link_state);
    (void)nl_->setVfRate(pf_, 0, before_.min_tx_rate, before_.max_tx_rate);
  }
  // Runs a knob; a driver refusing it (EOPNOTSUPP) skips rather than fails.
  void applyOrSkip(const Status& st, const char* knob) {
    if (!st.ok() && st.error().sys_errno == EOPNOTSUPP) {
      GTEST_SKIP() << "driver does not support VF " << knob << ": " << st.error().msg;
    }
    ASSERT_TRUE(st.ok()) << st.error().msg;
  }
  VfInfo vf0() {
    auto vfs = nl_->vfs(pf_);
    EXPECT_TRUE(vfs.ok());
    return vfs.ok() && !vfs->empty() ? (*vfs)[0] : VfInfo{};
  }

  std::unique_ptr<LibnlNetlink> nl_;
  int pf_ = 0;
  VfInfo before_;
};

TEST_F(LibnlVfTest, SetsAndReadsMac) {
  const auto mac = MacAddress::parse("02:00:00:aa:bb:01").value();
  applyOrSkip(nl_->setVfMac(pf_, 0, mac), "mac");
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_EQ(vf0().mac, mac);
}

TEST_F(LibnlVfTest, SetsAndReadsVlanAndQos) {
  applyOrSkip(nl_->setVfVlan(pf_, 0, 42, 3, ETH_P_8021Q), "vlan");
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_EQ(vf0().vlan, 42);
  EXPECT_EQ(vf0().qos, 3);
}

TEST_F(LibnlVfTest, SetsAndReadsSpoofchk) {
  applyOrSkip(nl_->setVfSpoofchk(pf_, 0, !before_.spoofchk), "spoofchk");
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_EQ(vf0().spoofchk, !before_.spoofchk);
}

TEST_F(LibnlVfTest, SetsAndReadsTrust) {
  applyOrSkip(nl_->setVfTrust(pf_, 0, !before_.trust), "trust");
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_EQ(vf0().trust, !before_.trust);
}

TEST_F(LibnlVfTest, SetsAndReadsLinkState) {
  applyOrSkip(nl_->setVfLinkState(pf_, 0, VfLinkState::kDisable), "link state");
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_EQ(vf0().link_state, VfLinkState::kDisable);
}

TEST_F(LibnlVfTest, SetsAndReadsRate) {
  applyOrSkip(nl_->setVfRate(pf_, 0, 0, 100), "rate");
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_EQ(vf0().max_tx_rate, 100u);
}

TEST_F(LibnlVfTest, PfReportsItsPciFunctionAsParentDevice) {
  const std::string pf = std::getenv("RDMANET_TEST_PF");
  char target[PATH_MAX] = {};
  const std::string link = "/sys/class/net/" + pf + "/device";
  ASSERT_GT(::readlink(link.c_str(), target, sizeof(target) - 1), 0) << link;
  const std::string pci = std::string(target).substr(std::string(target).rfind('/') + 1);
  auto l = nl_->linkByIndex(pf_);
  ASSERT_TRUE(l.ok()) << l.error().msg;
  EXPECT_EQ(l->parent_dev, pci);
}

TEST_F(LibnlVfTest, VfIndexOutOfRangeIsEinval) {
  auto st = nl_->setVfTrust(pf_, 4096, true);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().sys_errno, EINVAL);
}

}  // namespace
}  // namespace rdmanet::testing
