// NetnsHandle validation and SetnsRunner against real namespaces.
#include "common/net/netns.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tests/common/net/netns_helpers.h"

namespace rdmanet::testing {
namespace {

TEST(NetnsHandleTest, OpensOwnNetworkNamespace) {
  auto h = NetnsHandle::open("/proc/self/ns/net");
  ASSERT_TRUE(h.ok()) << h.error().msg;
  EXPECT_TRUE(h->valid());
}

TEST(NetnsHandleTest, RelativePathIsInvalidEnv) {
  auto h = NetnsHandle::open("proc/self/ns/net");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, ErrorCode::kInvalidEnv);
}

TEST(NetnsHandleTest, DotDotIsInvalidEnv) {
  auto h = NetnsHandle::open("/run/netns/../../proc/self/ns/net");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, ErrorCode::kInvalidEnv);
}

TEST(NetnsHandleTest, MissingPathIsContainerUnknown) {
  auto h = NetnsHandle::open("/run/netns/rdmanet-does-not-exist");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, ErrorCode::kContainerUnknown);
  EXPECT_EQ(h.error().sys_errno, ENOENT);
}

TEST(NetnsHandleTest, RegularFileIsNotANamespace) {
  const auto path =
      std::filesystem::temp_directory_path() / ("rdmanet-netns-test-" + std::to_string(::getpid()));
  std::ofstream(path) << "not a namespace";
  auto h = NetnsHandle::open(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, ErrorCode::kInvalidEnv);
}

TEST(NetnsHandleTest, OtherNamespaceTypeIsRejected) {
  auto h = NetnsHandle::open("/proc/self/ns/uts");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, ErrorCode::kInvalidEnv);
}

TEST(NetnsHandleTest, MoveTransfersOwnership) {
  auto h = NetnsHandle::open("/proc/self/ns/net");
  ASSERT_TRUE(h.ok());
  const int fd = h->fd();
  NetnsHandle moved = std::move(*h);
  EXPECT_EQ(moved.fd(), fd);
  EXPECT_FALSE(h->valid());
}

class SetnsRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!isRoot()) GTEST_SKIP() << "SetnsRunner test needs root (setns into a new namespace)";
    ns_ = std::make_unique<ScratchNetns>();
    ASSERT_TRUE(ns_->ok());
  }
  std::unique_ptr<ScratchNetns> ns_;
};

TEST_F(SetnsRunnerTest, RunsInsideTargetAndRestores) {
  const unsigned long before = currentNetnsInode();
  unsigned long inside = 0;
  size_t links_inside = 0;
  SetnsRunner runner;
  auto st = runner.run(ns_->path(), [&](Netlink& nl) -> Status {
    inside = currentNetnsInode();
    RDMANET_ASSIGN_OR_RETURN(auto links, nl.links());
    links_inside = links.size();
    return okStatus();
  });
  ASSERT_TRUE(st.ok()) << st.error().msg;
  EXPECT_NE(inside, before);
  EXPECT_EQ(links_inside, 1u);  // a fresh namespace has only lo: the socket was opened inside
  EXPECT_EQ(currentNetnsInode(), before);
}

TEST_F(SetnsRunnerTest, RestoresEvenWhenFnFails) {
  const unsigned long before = currentNetnsInode();
  SetnsRunner runner;
  auto st = runner.run(ns_->path(), [](Netlink&) -> Status {
    return makeError(ErrorCode::kInvalidConfig, "fn failed on purpose");
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(currentNetnsInode(), before);
}

TEST_F(SetnsRunnerTest, RestoresEvenWhenFnThrows) {
  const unsigned long before = currentNetnsInode();
  SetnsRunner runner;
  EXPECT_THROW(
      (void)runner.run(ns_->path(), [](Netlink&) -> Status { throw std::runtime_error("boom"); }),
      std::runtime_error);
  EXPECT_EQ(currentNetnsInode(), before);
}

TEST_F(SetnsRunnerTest, MissingNamespaceIsError3AndFnDoesNotRun) {
  bool ran = false;
  SetnsRunner runner;
  auto st = runner.run("/run/netns/rdmanet-does-not-exist", [&](Netlink&) {
    ran = true;
    return okStatus();
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kContainerUnknown);
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace rdmanet::testing
