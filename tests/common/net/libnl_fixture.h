#pragma once
// Fixture for netns-labelled tests: a throw-away namespace entered on the test thread, with a
// veth pair va/vb inside and a LibnlNetlink opened there. Skips when not root.

#include <gtest/gtest.h>

#include <memory>

#include "common/net/libnl_netlink.h"
#include "tests/common/net/netns_helpers.h"

namespace rdmanet::testing {

class LibnlNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!isRoot()) {
      GTEST_SKIP() << "netns test needs root: it creates network namespaces and veth links";
    }
    ns_ = std::make_unique<ScratchNetns>();
    ASSERT_TRUE(ns_->ok()) << "ip netns add failed";
    std::string err;
    ASSERT_TRUE(
        ip({"-n", ns_->name(), "link", "add", "va", "type", "veth", "peer", "name", "vb"}, &err))
        << err;
    enter_ = std::make_unique<EnterNetns>(ns_->path());
    ASSERT_TRUE(enter_->ok());
    auto nl = LibnlNetlink::open();
    ASSERT_TRUE(nl.ok()) << nl.error().msg;
    nl_ = std::move(*nl);
  }

  void TearDown() override {
    nl_.reset();
    enter_.reset();  // back to the original namespace before deleting the scratch one
    ns_.reset();
  }

  int index(const std::string& name) {
    auto l = nl_->linkByName(name);
    EXPECT_TRUE(l.ok()) << name << ": " << (l.ok() ? "" : l.error().msg);
    return l.ok() ? l->ifindex : 0;
  }

  // `ip -d link show <name>` in the scratch namespace (what the kernel reports, independently
  // of our decoder).
  std::string ipDetails(const std::string& name) {
    std::string out;
    run({"/bin/sh", "-c", "/usr/bin/ip -n " + ns_->name() + " -d link show " + name + " 1>&2"},
        &out);
    return out;
  }

  std::unique_ptr<ScratchNetns> ns_;
  std::unique_ptr<EnterNetns> enter_;
  std::unique_ptr<LibnlNetlink> nl_;
};

}  // namespace rdmanet::testing
