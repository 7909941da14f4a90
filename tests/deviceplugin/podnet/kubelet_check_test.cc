// The CNI's attachments cross-checked with kubelet's pod-resources view (kubelet_check.h).
#include "deviceplugin/podnet/kubelet_check.h"

#include <gtest/gtest.h>

namespace rdmanet::podnet {
namespace {

PodAttachment att(const std::string& cid, const std::string& pod, const std::string& pci) {
  return PodAttachment{.container_id = cid,
                       .ifname = "net1",
                       .pod_namespace = pod.empty() ? "" : "ml",
                       .pod_name = pod,
                       .mode = "sriov",
                       .pci = pci};
}

TEST(KubeletCheckTest, KubeletNamesThePodOfAnAttachmentAnOlderCniLeftAnonymous) {
  std::vector<PodAttachment> atts = {att("c1", "", "0000:03:00.2")};
  const auto r = crossCheck(atts, {{"ml", "trainer-0", {"0000:03:00.2"}}});
  EXPECT_EQ(r.filled, 1);
  ASSERT_EQ(atts.size(), 1u);
  EXPECT_EQ(atts[0].podRef(), "ml/trainer-0");
}

TEST(KubeletCheckTest, AStaleAttachmentOfADeviceKubeletGaveToAnotherPodIsDropped) {
  // trainer-0 died without a DEL; kubelet gave its VF to trainer-5, whose ADD wrote state too.
  std::vector<PodAttachment> atts = {att("old", "trainer-0", "0000:03:00.2"),
                                     att("new", "trainer-5", "0000:03:00.2")};
  const auto r = crossCheck(atts, {{"ml", "trainer-5", {"0000:03:00.2"}}});
  EXPECT_EQ(r.dropped, 1);
  ASSERT_EQ(atts.size(), 1u);
  EXPECT_EQ(atts[0].container_id, "new");
}

TEST(KubeletCheckTest, AnAttachmentKubeletHasNotCaughtUpWithIsKept) {
  std::vector<PodAttachment> atts = {att("c1", "trainer-0", "0000:03:00.2")};
  const auto r = crossCheck(atts, {{"ml", "trainer-9", {"0000:03:00.2"}}});
  EXPECT_EQ(r.dropped, 0);
  EXPECT_EQ(atts.size(), 1u);
}

TEST(KubeletCheckTest, DevicesKubeletDoesNotListAreLeftAlone) {
  std::vector<PodAttachment> atts = {att("c1", "trainer-0", ""), att("c2", "", "0000:03:00.4")};
  const auto r = crossCheck(atts, {{"ml", "other", {"0000:81:00.1"}}});
  EXPECT_EQ(r.filled, 0);
  EXPECT_EQ(r.dropped, 0);
  EXPECT_EQ(atts.size(), 2u);
}

}  // namespace
}  // namespace rdmanet::podnet
