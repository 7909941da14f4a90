// What a container gets from a prepared claim, resolved as kubelet and the runtime do it
// (cdi_runtime.h): the CDI IDs kubelet hands a container that references a request, applied in
// order from the spec files. Every container must see the env of exactly its request's devices,
// as the device plugin's Allocate builds it for a container that asks for several devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/kubelet/cdi_runtime.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"

namespace rdmanet::dp {
namespace {

using nlohmann::json;
using testing::applyCdi;
using testing::containerCdiIds;
using testing::ContainerView;
using testing::DraPrepareTest;
using ::testing::ElementsAre;
using testing::filesUnder;
using ::testing::HasSubstr;
using testing::readJson;

using PrepareResponse = k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourceResponse;

class DraPrepareEnvTest : public DraPrepareTest {
 protected:
  // Prepares claim `name` of `results` and returns its answer (error "" asserted by the caller).
  PrepareResponse prepare(const std::string& name, const json& results,
                          const std::vector<std::string>& requests, std::string* uid) {
    *uid = createClaim(name, results, requests);
    auto resp = kubelet_->prepare({{"team", *uid, name}});
    EXPECT_TRUE(resp) << kubelet_->lastError();
    if (!resp || !resp->claims().count(*uid)) return {};
    return resp->claims().at(*uid);
  }
  ContainerView container(const PrepareResponse& c, const std::string& request) {
    ContainerView v = applyCdi(cdi_dir_, containerCdiIds(c, request));
    EXPECT_TRUE(v.unresolved.empty()) << v.unresolved.front();
    return v;
  }
  std::set<std::string> nodesOf(const std::vector<PciAddress>& fns) const {
    std::set<std::string> out = {"/dev/infiniband/rdma_cm"};
    for (const PciAddress& f : fns) out.merge(charDevicesOf(f));
    return out;
  }
};

TEST_F(DraPrepareEnvTest, ARequestOfThreeVfsGivesItsContainersTheEnvOfAllThree) {
  startRegistered(api_->url());
  const std::vector<PciAddress> vfs = {node_.vf(0, 0), node_.vf(1, 0), node_.vf(2, 1)};
  json results = json::array();
  for (const PciAddress& v : vfs) results.push_back(result("nic", dra::pciDeviceName(v)));
  std::string uid;
  const PrepareResponse c = prepare("three", results, {"nic"}, &uid);
  ASSERT_EQ(c.error(), "");
  ASSERT_EQ(c.devices_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(c.devices(i).request_names(), ElementsAre("nic"));
    std::vector<std::string> ids = {"rdmanet.io/rdma=" + uid + "-" + dra::pciDeviceName(vfs[i]),
                                    "rdmanet.io/rdma=" + uid + "_nic"};
    // The request's device metadata once, with its first device.
    if (i == 0) ids.push_back(testing::metadataCdiId(uid));
    EXPECT_THAT(c.devices(i).cdi_device_ids(), ::testing::ElementsAreArray(ids));
  }
  const std::string addrs = vfs[0].str() + "," + vfs[1].str() + "," + vfs[2].str();
  const std::string hcas = "=" + hcaOf(vfs[0]) + "," + hcaOf(vfs[1]) + "," + hcaOf(vfs[2]);
  ASSERT_EQ(hcas.size() > 3, true);
  // The container that names the request, and one that takes the whole claim.
  for (const std::string request : {"nic", ""}) {
    SCOPED_TRACE("request '" + request + "'");
    const ContainerView seen = container(c, request);
    EXPECT_EQ(seen.env.at("PCIDEVICE_RDMA_VF"), addrs);
    EXPECT_EQ(seen.env.at("NCCL_IB_HCA"), hcas);
    const json info = json::parse(seen.env.at("PCIDEVICE_RDMA_VF_INFO"));
    EXPECT_EQ(info.size(), 3u);
    EXPECT_EQ(seen.device_nodes, nodesOf(vfs));
  }

  // Idempotent: the same IDs again.
  auto again = kubelet_->prepare({{"team", uid, "three"}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->claims().at(uid).SerializeAsString(), c.SerializeAsString());
  auto un = kubelet_->unprepare({{"team", uid, "three"}});
  ASSERT_TRUE(un);
  EXPECT_EQ(un->claims().at(uid).error(), "");
  EXPECT_TRUE(filesUnder(cdi_dir_).empty());
}

TEST_F(DraPrepareEnvTest, TwoRequestsKeepTheirOwnDevicesAndEnv) {
  startRegistered(api_->url());
  const PciAddress a0 = node_.vf(0, 0), a1 = node_.vf(0, 1), b = node_.vf(2, 3);
  std::string uid;
  const PrepareResponse c = prepare(
      "two",
      json::array({result("nic0", dra::pciDeviceName(a0)), result("nic1", dra::pciDeviceName(b)),
                   result("nic0", dra::pciDeviceName(a1))}),
      {"nic0", "nic1"}, &uid);
  ASSERT_EQ(c.error(), "");
  ASSERT_EQ(c.devices_size(), 3);
  EXPECT_THAT(c.devices(0).request_names(), ElementsAre("nic0"));
  EXPECT_THAT(c.devices(1).request_names(), ElementsAre("nic0"));
  EXPECT_THAT(c.devices(2).request_names(), ElementsAre("nic1"));
  const ContainerView first = container(c, "nic0");
  EXPECT_EQ(first.env.at("PCIDEVICE_RDMA_VF"), a0.str() + "," + a1.str());
  EXPECT_EQ(first.env.at("NCCL_IB_HCA"), "=" + hcaOf(a0) + "," + hcaOf(a1));
  EXPECT_EQ(first.device_nodes, nodesOf({a0, a1}));
  const ContainerView second = container(c, "nic1");
  EXPECT_EQ(second.env.at("PCIDEVICE_RDMA_VF"), b.str());
  EXPECT_EQ(second.env.at("NCCL_IB_HCA"), "=" + hcaOf(b));
  EXPECT_EQ(second.device_nodes, nodesOf({b}));
  // A container of neither request (a GPU-only one) gets nothing of ours.
  EXPECT_TRUE(container(c, "gpu").env.empty());
}

TEST_F(DraPrepareEnvTest, ASubrequestMapsToItsTopLevelRequest) {
  // A prioritized list: the allocation names "nic/fast"; containers name "nic", and kubelet
  // compares request_names with the container's request as plain strings.
  startRegistered(api_->url());
  const PciAddress v0 = node_.vf(1, 1), v1 = node_.vf(3, 0);
  std::string uid;
  const PrepareResponse c = prepare("prio",
                                    json::array({result("nic/fast", dra::pciDeviceName(v0)),
                                                 result("nic/fast", dra::pciDeviceName(v1))}),
                                    {"nic"}, &uid);
  ASSERT_EQ(c.error(), "");
  ASSERT_EQ(c.devices_size(), 2);
  EXPECT_THAT(c.devices(0).request_names(), ElementsAre("nic"));
  EXPECT_THAT(c.devices(1).request_names(), ElementsAre("nic"));
  EXPECT_EQ(c.devices(0).cdi_device_ids(1), "rdmanet.io/rdma=" + uid + "_nic");
  const ContainerView seen = container(c, "nic");
  EXPECT_EQ(seen.env.at("PCIDEVICE_RDMA_VF"), v0.str() + "," + v1.str());
  EXPECT_EQ(seen.device_nodes, nodesOf({v0, v1}));
}

TEST_F(DraPrepareEnvTest, ARequestAcrossPoolsGetsEachPoolsNamesAndAllHcas) {
  // Only a custom DeviceClass (driver, no pool) can do this: the chart's select one pool each.
  startRegistered(api_->url());
  const PciAddress vf = node_.vf(0, 2), pf = node_.pf(1);
  std::string uid;
  const PrepareResponse c = prepare(
      "span",
      json::array({result("nic", dra::pciDeviceName(vf)), result("nic", dra::pciDeviceName(pf))}),
      {"nic"}, &uid);
  ASSERT_EQ(c.error(), "");
  const ContainerView seen = container(c, "nic");
  EXPECT_EQ(seen.env.at("PCIDEVICE_RDMA_VF"), vf.str());
  EXPECT_EQ(seen.env.at("PCIDEVICE_RDMA_SHARED"), pf.str());
  EXPECT_EQ(seen.env.at("NCCL_IB_HCA"), "=" + hcaOf(vf) + "," + hcaOf(pf));
  EXPECT_EQ(seen.device_nodes, nodesOf({vf, pf}));
}

TEST_F(DraPrepareEnvTest, ASharedDeviceInTwoRequestsBringsEachRequestOnlyItsOwnEnv) {
  startRegistered(api_->url());
  const PciAddress pf = node_.pf(2), vf = node_.vf(0, 3);
  std::string uid;
  const PrepareResponse c =
      prepare("shared",
              json::array({result("a", dra::pciDeviceName(pf)), result("b", dra::pciDeviceName(pf)),
                           result("b", dra::pciDeviceName(vf))}),
              {"a", "b"}, &uid);
  ASSERT_EQ(c.error(), "");
  ASSERT_EQ(c.devices_size(), 3);  // the PF once per request
  json spec = readJson(cdi_dir_ / claimSpecFileName(uid));
  EXPECT_EQ(spec["devices"].size(), 4u);  // the PF's and the VF's nodes, a's env, b's env
  const ContainerView a = container(c, "a");
  EXPECT_EQ(a.env.at("PCIDEVICE_RDMA_SHARED"), pf.str());
  EXPECT_EQ(a.env.count("PCIDEVICE_RDMA_VF"), 0u);
  EXPECT_EQ(a.env.at("NCCL_IB_HCA"), "=" + hcaOf(pf));
  EXPECT_EQ(a.device_nodes, nodesOf({pf}));
  const ContainerView b = container(c, "b");
  EXPECT_EQ(b.env.at("PCIDEVICE_RDMA_SHARED"), pf.str());
  EXPECT_EQ(b.env.at("PCIDEVICE_RDMA_VF"), vf.str());
  EXPECT_EQ(b.device_nodes, nodesOf({pf, vf}));
}

TEST_F(DraPrepareEnvTest, AMalformedRequestNameIsAPerClaimError) {
  startRegistered(api_->url());
  std::string uid;
  const PrepareResponse c =
      prepare("bad-request", json::array({result("nic/a/b", dra::pciDeviceName(node_.vf(0, 0)))}),
              {"nic"}, &uid);
  EXPECT_THAT(c.error(), HasSubstr("malformed request name"));
  EXPECT_TRUE(filesUnder(cdi_dir_).empty());
}

}  // namespace
}  // namespace rdmanet::dp
