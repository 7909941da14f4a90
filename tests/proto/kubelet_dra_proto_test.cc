// Kubelet finds a DRA plugin's services and decodes its messages by full name and field number;
// these pin what proto/kubelet/* (verbatim upstream copies) generate, so an accidental edit of
// a package, service, method or number fails here rather than against a real kubelet.
#include <gtest/gtest.h>

#include "proto/kubelet/dra-health/v1/api.grpc.pb.h"
#include "proto/kubelet/dra/v1/api.grpc.pb.h"
#include "proto/kubelet/pluginregistration/v1/api.grpc.pb.h"

namespace {

using google::protobuf::Descriptor;

int number(const Descriptor* d, const char* field) {
  const auto* f = d->FindFieldByName(field);
  return f == nullptr ? -1 : f->number();
}

TEST(KubeletDraProtoTest, ServiceAndMethodNamesAreKubelets) {
  namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;
  EXPECT_STREQ(dra::DRAPlugin::service_full_name(), "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin");
  EXPECT_STREQ(v1::DRAResourceHealth::service_full_name(), "v1.DRAResourceHealth");
  EXPECT_STREQ(pluginregistration::Registration::service_full_name(),
               "pluginregistration.Registration");
  const auto* svc =
      dra::NodePrepareResourcesRequest::descriptor()->file()->FindServiceByName("DRAPlugin");
  ASSERT_NE(svc, nullptr);
  EXPECT_NE(svc->FindMethodByName("NodePrepareResources"), nullptr);
  EXPECT_NE(svc->FindMethodByName("NodeUnprepareResources"), nullptr);
  const auto* health =
      v1::NodeWatchResourcesRequest::descriptor()->file()->FindServiceByName("DRAResourceHealth");
  ASSERT_NE(health, nullptr);
  ASSERT_NE(health->FindMethodByName("NodeWatchResources"), nullptr);
  EXPECT_TRUE(health->FindMethodByName("NodeWatchResources")->server_streaming());
}

TEST(KubeletDraProtoTest, FieldNumbersAreKubelets) {
  namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;
  const auto* claim = dra::Claim::descriptor();
  EXPECT_EQ(number(claim, "namespace"), 1);
  EXPECT_EQ(number(claim, "uid"), 2);
  EXPECT_EQ(number(claim, "name"), 3);
  const auto* dev = dra::Device::descriptor();
  EXPECT_EQ(number(dev, "request_names"), 1);
  EXPECT_EQ(number(dev, "pool_name"), 2);
  EXPECT_EQ(number(dev, "device_name"), 3);
  EXPECT_EQ(number(dev, "cdi_device_ids"), 4);
  EXPECT_EQ(number(dev, "share_id"), 5);
  EXPECT_TRUE(dev->FindFieldByName("share_id")->has_presence()) << "proto3 optional";
  EXPECT_EQ(number(dra::NodePrepareResourceResponse::descriptor(), "error"), 2);
  EXPECT_EQ(number(dra::NodeUnprepareResourceResponse::descriptor(), "error"), 1);

  const auto* dh = v1::DeviceHealth::descriptor();
  EXPECT_EQ(number(dh, "device"), 1);
  EXPECT_EQ(number(dh, "health"), 2);
  EXPECT_EQ(number(dh, "last_updated_time"), 3);
  EXPECT_EQ(number(dh, "health_check_timeout_seconds"), 4);
  EXPECT_EQ(number(dh, "message"), 5);
  EXPECT_EQ(v1::HealthStatus_Name(v1::UNHEALTHY), "UNHEALTHY");
  EXPECT_EQ(static_cast<int>(v1::UNHEALTHY), 2);

  const auto* info = pluginregistration::PluginInfo::descriptor();
  EXPECT_EQ(number(info, "type"), 1);
  EXPECT_EQ(number(info, "name"), 2);
  EXPECT_EQ(number(info, "endpoint"), 3);
  EXPECT_EQ(number(info, "supported_versions"), 4);
  EXPECT_EQ(number(pluginregistration::RegistrationStatus::descriptor(), "plugin_registered"), 1);
}

TEST(KubeletDraProtoTest, ADeviceRoundTripsOnTheWire) {
  namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;
  dra::NodePrepareResourcesResponse resp;
  auto& claim = (*resp.mutable_claims())["uid-1"];
  auto* d = claim.add_devices();
  d->add_request_names("nic");
  d->set_pool_name("node-1");
  d->set_device_name("pci-0000-81-00-2");
  d->add_cdi_device_ids("rdmanet.io/rdma=uid-1-pci-0000-81-00-2");
  const std::string wire = resp.SerializeAsString();
  dra::NodePrepareResourcesResponse back;
  ASSERT_TRUE(back.ParseFromString(wire));
  const auto& bd = back.claims().at("uid-1").devices(0);
  EXPECT_EQ(bd.request_names(0), "nic");
  EXPECT_EQ(bd.cdi_device_ids(0), "rdmanet.io/rdma=uid-1-pci-0000-81-00-2");
  EXPECT_FALSE(bd.has_share_id());
}

}  // namespace
