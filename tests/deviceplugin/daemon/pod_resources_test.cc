// The pod-resources client (daemon/pod_resources.h) against an in-process kubelet stand-in
// serving v1 PodResourcesLister on a unix socket.
#include "deviceplugin/daemon/pod_resources.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "proto/kubelet/podresources/v1/api.grpc.pb.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::dp {
namespace {

class FakeLister final : public ::v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const ::v1::ListPodResourcesRequest*,
                    ::v1::ListPodResourcesResponse* resp) override {
    auto* p = resp->add_pod_resources();
    p->set_name("trainer-0");
    p->set_namespace_("ml");
    for (const char* container : {"main", "sidecar"}) {
      auto* c = p->add_containers();
      c->set_name(container);
      auto* d = c->add_devices();
      d->set_resource_name(container == std::string("main") ? "rdma/vf" : "nvidia.com/gpu");
      d->add_device_ids(container == std::string("main") ? "0000:03:00.2" : "GPU-1");
    }
    // A DRA pod: a claim with a device of ours and one of another driver.
    auto* dra_pod = resp->add_pod_resources();
    dra_pod->set_name("trainer-1");
    dra_pod->set_namespace_("ml");
    auto* claim = dra_pod->add_containers()->add_dynamic_resources();
    claim->set_claim_name("nic");
    claim->set_claim_namespace("ml");
    for (const auto& [driver, device] :
         {std::pair{"rdma.rdmanet.io", "pci-0000-03-00-4"}, {"gpu.example.com", "gpu-0"}}) {
      auto* r = claim->add_claim_resources();
      r->set_driver_name(driver);
      r->set_pool_name("node-a");
      r->set_device_name(device);
    }
    auto* idle = resp->add_pod_resources();  // no devices: not a pod the map needs
    idle->set_name("web");
    idle->set_namespace_("default");
    idle->add_containers()->set_name("nginx");
    return grpc::Status::OK;
  }
};

TEST(PodResourcesTest, ListsEachPodsDevicesOverContainersResourcesAndOurDraClaims) {
  sim::TempDir dir{"rdmanet-podres"};
  const auto sock = dir.path() / "kubelet.sock";
  FakeLister lister;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + sock.string(), grpc::InsecureServerCredentials());
  builder.RegisterService(&lister);
  auto server = builder.BuildAndStart();
  ASSERT_TRUE(server);
  auto source = makePodResourcesSource(sock, std::chrono::seconds(5), "rdma.rdmanet.io");
  auto pods = source->list();
  ASSERT_TRUE(pods.ok()) << pods.error().msg;
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].pod_namespace, "ml");
  EXPECT_EQ((*pods)[0].pod_name, "trainer-0");
  EXPECT_EQ((*pods)[0].device_ids, (std::vector<std::string>{"0000:03:00.2", "GPU-1"}));
  // DRA: our driver's device by its PCI address; the other driver's is not ours to map.
  EXPECT_EQ((*pods)[1].pod_name, "trainer-1");
  EXPECT_EQ((*pods)[1].device_ids, std::vector<std::string>{"0000:03:00.4"});
  server->Shutdown();
}

TEST(PodResourcesTest, NoKubeletSocketIsTryAgainLater) {
  sim::TempDir dir{"rdmanet-podres"};
  auto pods = makePodResourcesSource(dir.path() / "kubelet.sock", std::chrono::seconds(1),
                                     "rdma.rdmanet.io")
                  ->list();
  ASSERT_FALSE(pods.ok());
  EXPECT_EQ(pods.error().code, ErrorCode::kTryAgainLater);
}

}  // namespace
}  // namespace rdmanet::dp
