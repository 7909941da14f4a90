// Kubelet finds a DRA plugin's services and decodes its messages by full name and field number;
// these pin what proto/kubelet/* (verbatim upstream copies, checked by proto.kubelet_verbatim)
// generate, so an accidental edit of a package, service or number fails here rather than
// against a real kubelet. The messages are built for the lite runtime (no descriptors), so field
// numbers are read where kubelet reads them: from the serialised bytes.
#include <gtest/gtest.h>

#include <string>

#include "proto/kubelet/dra-health/v1/api.grpc.pb.h"
#include "proto/kubelet/dra/v1/api.grpc.pb.h"
#include "proto/kubelet/pluginregistration/v1/api.grpc.pb.h"

namespace {

constexpr int kVarint = 0;
constexpr int kLength = 2;

// A field's key on the wire: (number << 3) | wire type, one byte for numbers below 16.
constexpr int key(int number, int wire_type) { return (number << 3) | wire_type; }

// The first byte of `m` serialised after `set` put one field in it: that field's key.
template <typename M, typename Set>
int keyOf(Set set) {
  M m;
  set(m);
  const std::string wire = m.SerializeAsString();
  return wire.empty() ? -1 : static_cast<unsigned char>(wire[0]);
}

TEST(KubeletDraProtoTest, ServiceNamesAreKubelets) {
  namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;
  EXPECT_STREQ(dra::DRAPlugin::service_full_name(), "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin");
  EXPECT_STREQ(v1::DRAResourceHealth::service_full_name(), "v1.DRAResourceHealth");
  EXPECT_STREQ(pluginregistration::Registration::service_full_name(),
               "pluginregistration.Registration");
}

TEST(KubeletDraProtoTest, FieldNumbersAreKubelets) {
  namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;
  using dra::Claim;
  EXPECT_EQ(keyOf<Claim>([](Claim& m) { m.set_namespace_("n"); }), key(1, kLength));
  EXPECT_EQ(keyOf<Claim>([](Claim& m) { m.set_uid("u"); }), key(2, kLength));
  EXPECT_EQ(keyOf<Claim>([](Claim& m) { m.set_name("c"); }), key(3, kLength));
  using dra::Device;
  EXPECT_EQ(keyOf<Device>([](Device& m) { m.add_request_names("r"); }), key(1, kLength));
  EXPECT_EQ(keyOf<Device>([](Device& m) { m.set_pool_name("p"); }), key(2, kLength));
  EXPECT_EQ(keyOf<Device>([](Device& m) { m.set_device_name("d"); }), key(3, kLength));
  EXPECT_EQ(keyOf<Device>([](Device& m) { m.add_cdi_device_ids("i"); }), key(4, kLength));
  // share_id is proto3 `optional`: set to "" it is still sent, which only a field with presence
  // does.
  EXPECT_EQ(keyOf<Device>([](Device& m) { m.set_share_id(""); }), key(5, kLength));
  EXPECT_EQ(keyOf<dra::NodePrepareResourceResponse>(
                [](dra::NodePrepareResourceResponse& m) { m.set_error("e"); }),
            key(2, kLength));
  EXPECT_EQ(keyOf<dra::NodeUnprepareResourceResponse>(
                [](dra::NodeUnprepareResourceResponse& m) { m.set_error("e"); }),
            key(1, kLength));

  using v1::DeviceHealth;
  EXPECT_EQ(keyOf<DeviceHealth>([](DeviceHealth& m) { m.mutable_device()->set_pool_name("p"); }),
            key(1, kLength));
  EXPECT_EQ(keyOf<DeviceHealth>([](DeviceHealth& m) { m.set_health(v1::UNHEALTHY); }),
            key(2, kVarint));
  EXPECT_EQ(keyOf<DeviceHealth>([](DeviceHealth& m) { m.set_last_updated_time(1); }),
            key(3, kVarint));
  EXPECT_EQ(keyOf<DeviceHealth>([](DeviceHealth& m) { m.set_health_check_timeout_seconds(1); }),
            key(4, kVarint));
  EXPECT_EQ(keyOf<DeviceHealth>([](DeviceHealth& m) { m.set_message("m"); }), key(5, kLength));
  EXPECT_EQ(v1::HealthStatus_Name(v1::UNHEALTHY), "UNHEALTHY");
  EXPECT_EQ(static_cast<int>(v1::UNHEALTHY), 2);

  using pluginregistration::PluginInfo;
  EXPECT_EQ(keyOf<PluginInfo>([](PluginInfo& m) { m.set_type("t"); }), key(1, kLength));
  EXPECT_EQ(keyOf<PluginInfo>([](PluginInfo& m) { m.set_name("n"); }), key(2, kLength));
  EXPECT_EQ(keyOf<PluginInfo>([](PluginInfo& m) { m.set_endpoint("e"); }), key(3, kLength));
  EXPECT_EQ(keyOf<PluginInfo>([](PluginInfo& m) { m.add_supported_versions("v"); }),
            key(4, kLength));
  EXPECT_EQ(keyOf<pluginregistration::RegistrationStatus>(
                [](pluginregistration::RegistrationStatus& m) { m.set_plugin_registered(true); }),
            key(1, kVarint));
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
