// The daemon's reading of the CNI's state: files written by the CNI's own StateStore, so a key
// the CNI renames breaks here (pod_attachments.h).
#include "deviceplugin/podnet/pod_attachments.h"

#include <gtest/gtest.h>

#include <fstream>

#include "cni/state/state_store.h"
#include "tests/deviceplugin/podnet/cni_state.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::podnet {
namespace {

cni::AttachmentState attachment(const std::string& cid, const std::string& pod) {
  auto st = testing::cniSriov(cid, pod,
                              {.pci = "0000:03:00.3",
                               .netdev = "ens1f0v1",
                               .pf = "ens1f0",
                               .pf_pci = "0000:03:00.0",
                               .index = 1});
  st.rdma_moved = {"mlx5_4"};
  return st;
}

class PodAttachmentsTest : public ::testing::Test {
 protected:
  sim::TempDir tmp_{"rdmanet-podatt"};
  cni::StateStore store_{tmp_.path() / "state"};
};

TEST_F(PodAttachmentsTest, ReadsWhatTheCniWrote) {
  ASSERT_TRUE(store_.save(attachment("c1", "trainer-0")).ok());
  const auto atts = readPodAttachments(store_.dir());
  ASSERT_EQ(atts.size(), 1u);
  const auto& a = atts[0];
  EXPECT_EQ(a.container_id, "c1");
  EXPECT_EQ(a.ifname, "net1");
  EXPECT_EQ(a.netns, "/var/run/netns/c1");
  EXPECT_EQ(a.podRef(), "ml/trainer-0");
  EXPECT_EQ(a.pod_uid, "uid-trainer-0");
  EXPECT_EQ(a.mode, "sriov");
  EXPECT_EQ(a.pci, "0000:03:00.3");
  EXPECT_EQ(a.host_netdev, "ens1f0v1");
  EXPECT_EQ(a.pf_name, "ens1f0");
  EXPECT_EQ(a.pf_pci, "0000:03:00.0");
  EXPECT_EQ(a.vf_index, 1);
  EXPECT_EQ(a.priority, 3);
  EXPECT_EQ(a.rdma_in_pod, std::vector<std::string>{"mlx5_4"});
}

TEST_F(PodAttachmentsTest, AnAddInProgressIsNotThePodsYet) {
  auto st = attachment("c1", "trainer-0");
  st.complete = false;
  ASSERT_TRUE(store_.save(st).ok());
  EXPECT_TRUE(readPodAttachments(store_.dir()).empty());
}

TEST_F(PodAttachmentsTest, ADeletedAttachmentIsGoneFromTheNextRead) {
  ASSERT_TRUE(store_.save(attachment("c1", "trainer-0")).ok());
  ASSERT_TRUE(store_.save(attachment("c2", "trainer-1")).ok());
  ASSERT_EQ(readPodAttachments(store_.dir()).size(), 2u);
  ASSERT_TRUE(store_.remove("c1", "net1").ok());
  const auto atts = readPodAttachments(store_.dir());
  ASSERT_EQ(atts.size(), 1u);
  EXPECT_EQ(atts[0].pod_name, "trainer-1");
}

TEST_F(PodAttachmentsTest, CorruptAndForeignFilesAreSkipped) {
  ASSERT_TRUE(store_.save(attachment("c1", "trainer-0")).ok());
  std::ofstream(store_.dir() / "broken_net1.json") << "{not json";
  std::ofstream(store_.dir() / "typed_net1.json") << R"({"containerID": 7, "complete": true})";
  std::ofstream(store_.dir() / "c9_net1.json.rdmanet-tmp.1") << "{}";
  const auto atts = readPodAttachments(store_.dir());
  ASSERT_EQ(atts.size(), 1u);
  EXPECT_EQ(atts[0].pod_name, "trainer-0");
}

TEST_F(PodAttachmentsTest, AMissingStateDirIsAnEmptyMap) {
  EXPECT_TRUE(readPodAttachments(tmp_.path() / "nowhere").empty());
}

}  // namespace
}  // namespace rdmanet::podnet
