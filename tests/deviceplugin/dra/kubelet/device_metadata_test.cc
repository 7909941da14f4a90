// The device metadata a container reads (deviceplugin/dra/kubelet/device_metadata.h), against the
// upstream definition (k8s.io/dynamic-resource-allocation/api/metadata): the stream holds one
// DeviceMetadata object per version, newest first, each with exactly the fields of the Go types'
// JSON tags; the container path and the CDI spec follow upstream's layout.
#include "deviceplugin/dra/kubelet/device_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/dra/node_devices.h"
#include "tests/deviceplugin/dra/decoded_claim.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kDriver = "rdma.rdmanet.io";
const ClaimRef kRef{.ns = "team", .uid = "0b5a7c1e-4d2f", .name = "trainer-0-rdma"};

// The stream read as a consumer's json.Decoder reads it: one value after the other.
std::vector<json> objectsOf(const std::string& stream) {
  std::istringstream in(stream);
  std::vector<json> out;
  while (in >> std::ws, !in.eof()) {
    json j;
    in >> j;
    out.push_back(std::move(j));
  }
  return out;
}

std::set<std::string> keysOf(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

class DeviceMetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inv_.pools = buildPools(defaultConfig(), node_.inventory());
    inv_.devices = nodeDevices(inv_.pools);
    for (const PciAddress& a : {node_.vf(0, 1), node_.vf(1, 2)}) {
      const NodeDevice* d = inv_.find(dra::pciDeviceName(a));
      ASSERT_NE(d, nullptr);
      auto r = resolveDevice(inv_, *d);
      ASSERT_TRUE(r.ok()) << r.error().msg;
      devices_.push_back(*r);
    }
  }

  testing::TestNode node_;
  DeviceSnapshot inv_;
  std::vector<ResolvedDevice> devices_;
  const MetadataClaim claim_{.driver = kDriver, .pool = "node-a", .ref = kRef};
};

TEST_F(DeviceMetadataTest, TheStreamHoldsV1beta1ThenV1alpha1OfTheSameObject) {
  const auto objs = objectsOf(deviceMetadataStream(claim_, "nic/alt", devices_));
  ASSERT_EQ(objs.size(), 2u);
  EXPECT_EQ(objs[0]["apiVersion"], "metadata.resource.k8s.io/v1beta1");
  EXPECT_EQ(objs[1]["apiVersion"], "metadata.resource.k8s.io/v1alpha1");
  for (const json& o : objs) {
    EXPECT_EQ(o["kind"], "DeviceMetadata");
    json rest = o;
    rest.erase("apiVersion");
    json first = objs[0];
    first.erase("apiVersion");
    EXPECT_EQ(rest, first);  // the same object in each version
  }
}

TEST_F(DeviceMetadataTest, EachObjectHasExactlyTheGoTypesFields) {
  MetadataClaim templated = claim_;
  templated.pod_claim_name = "rdma";
  const json o = objectsOf(deviceMetadataStream(templated, "nic/alt", devices_))[0];
  // DeviceMetadata: TypeMeta inline, ObjectMeta as "metadata", podClaimName, requests.
  EXPECT_EQ(keysOf(o),
            (std::set<std::string>{"kind", "apiVersion", "metadata", "podClaimName", "requests"}));
  EXPECT_EQ(o["metadata"], (json{{"name", "trainer-0-rdma"},
                                 {"namespace", "team"},
                                 {"uid", "0b5a7c1e-4d2f"},
                                 {"generation", 1}}));
  EXPECT_EQ(o["podClaimName"], "rdma");
  ASSERT_EQ(o["requests"].size(), 1u);
  const json& req = o["requests"][0];
  EXPECT_EQ(keysOf(req), (std::set<std::string>{"name", "devices"}));
  EXPECT_EQ(req["name"], "nic/alt");  // the result's request, subrequest included
  ASSERT_EQ(req["devices"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const json& d = req["devices"][i];
    // Device: driver, pool, name, attributes; networkData is unknown at prepare.
    EXPECT_EQ(keysOf(d), (std::set<std::string>{"driver", "pool", "name", "attributes"}));
    EXPECT_EQ(d["driver"], kDriver);
    EXPECT_EQ(d["pool"], "node-a");
    EXPECT_EQ(d["name"], devices_[i].node->name);
    // Each attribute a DeviceAttribute: exactly one of its value fields.
    for (const auto& [name, value] : d["attributes"].items()) {
      ASSERT_EQ(value.size(), 1u) << name;
      const std::string field = value.begin().key();
      EXPECT_TRUE(field == "string" || field == "int" || field == "bool" || field == "version")
          << name << ": " << field;
    }
  }
  const json& a = req["devices"][0]["attributes"];
  EXPECT_EQ(a["resource.kubernetes.io/pciBusID"], (json{{"string", node_.vf(0, 1).str()}}));
  EXPECT_EQ(a["k8s.cni.cncf.io/deviceID"], (json{{"string", node_.vf(0, 1).str()}}));
  EXPECT_EQ(a["rdmanet.io/pool"], (json{{"string", "rdma/vf"}}));
  EXPECT_EQ(a["rdmanet.io/pfPciAddress"], (json{{"string", node_.pf(0).str()}}));
  EXPECT_EQ(a["rdmanet.io/vfIndex"], (json{{"int", 1}}));
  EXPECT_EQ(req["devices"][1]["attributes"]["resource.kubernetes.io/pciBusID"],
            (json{{"string", node_.vf(1, 2).str()}}));
}

TEST_F(DeviceMetadataTest, AClaimThePodNamesHasNoPodClaimName) {
  const json o = objectsOf(deviceMetadataStream(claim_, "nic", devices_))[1];
  EXPECT_FALSE(o.contains("podClaimName"));
  EXPECT_EQ(o["requests"][0]["name"], "nic");
}

TEST_F(DeviceMetadataTest, TheContainerPathFollowsHowThePodNamesTheClaim) {
  EXPECT_EQ(metadataContainerPath(claim_, "nic"),
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/trainer-0-rdma/nic/"
            "rdma.rdmanet.io-metadata.json");
  MetadataClaim templated = claim_;
  templated.pod_claim_name = "rdma";
  EXPECT_EQ(metadataContainerPath(templated, "nic"),
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/rdma/nic/"
            "rdma.rdmanet.io-metadata.json");
}

TEST_F(DeviceMetadataTest, ARequestsFileAndTheCdiDeviceThatMountsIt) {
  auto m = renderRequestMetadata(claim_, "nic/alt", devices_, "/p/dra-device-metadata", "/cdi");
  ASSERT_TRUE(m.ok()) << m.error().msg;
  EXPECT_EQ(m->request, "nic");
  EXPECT_EQ(m->host_file, "/p/dra-device-metadata/0b5a7c1e-4d2f/nic/metadata.json");
  EXPECT_EQ(m->cdi_spec, "/cdi/rdma.rdmanet.io_metadata_0b5a7c1e-4d2f_nic.json");
  EXPECT_EQ(m->cdi_id, "rdma.rdmanet.io/metadata=0b5a7c1e-4d2f_nic");
  EXPECT_EQ(m->cdi.name, "0b5a7c1e-4d2f_nic");
  ASSERT_EQ(m->cdi.edits.mounts.size(), 1u);
  EXPECT_EQ(m->cdi.edits.mounts[0].host_path, m->host_file.string());
  EXPECT_EQ(m->cdi.edits.mounts[0].container_path, metadataContainerPath(claim_, "nic"));
  EXPECT_TRUE(m->cdi.edits.mounts[0].read_only);
  EXPECT_EQ(m->content, deviceMetadataStream(claim_, "nic/alt", devices_));
  const json spec = encodeCdiSpec(metadataCdiKind(kDriver), {m->cdi});
  EXPECT_EQ(spec["kind"], "rdma.rdmanet.io/metadata");
  EXPECT_EQ(spec["devices"][0]["containerEdits"]["mounts"][0]["options"], (json{"bind", "ro"}));
}

TEST_F(DeviceMetadataTest, ANameUnfitForAPathIsRefused) {
  struct Case {
    MetadataClaim claim;
    std::string request;
    std::string msg;
  };
  MetadataClaim bad_pod = claim_, bad_name = claim_, bad_uid = claim_;
  bad_pod.pod_claim_name = "../../etc";
  bad_name.ref.name = "../x";
  bad_uid.ref.uid = "../u";
  for (const Case& c : {Case{claim_, "../nic", "request \"..\" is not a DNS label"},
                        Case{claim_, "Nic", "request \"Nic\" is not a DNS label"},
                        Case{bad_pod, "nic", "pod claim name \"../../etc\" is not a DNS label"},
                        Case{bad_name, "nic", "claim name \"../x\" is not a DNS subdomain"},
                        Case{bad_uid, "nic", "malformed claim UID"}}) {
    auto m = renderRequestMetadata(c.claim, c.request, devices_, "/p", "/cdi");
    ASSERT_FALSE(m.ok()) << c.msg;
    EXPECT_EQ(m.error().code, ErrorCode::kInvalidConfig);
    EXPECT_THAT(m.error().msg, HasSubstr(c.msg));
  }
}

TEST(PodClaimNameTest, IsTheAnnotationKubeletSetsOnATemplatesClaim) {
  json doc = {{"metadata", {{"name", "c"}, {"namespace", "ns"}, {"uid", "u"}}}};
  EXPECT_FALSE(podClaimNameOf(testing::decodedClaim(doc)).has_value());
  doc["metadata"]["annotations"] = {{"resource.kubernetes.io/pod-claim-name", "rdma"}};
  EXPECT_EQ(podClaimNameOf(testing::decodedClaim(doc)), "rdma");
  doc["metadata"]["annotations"] = {{"resource.kubernetes.io/pod-claim-name", ""}};
  EXPECT_FALSE(podClaimNameOf(testing::decodedClaim(doc)).has_value());
}

}  // namespace
}  // namespace rdmanet::dp
