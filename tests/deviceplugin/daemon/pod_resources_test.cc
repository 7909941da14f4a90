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
    auto* idle = resp->add_pod_resources();  // no devices: not a pod the map needs
    idle->set_name("web");
    idle->set_namespace_("default");
    idle->add_containers()->set_name("nginx");
    return grpc::Status::OK;
  }
};

TEST(PodResourcesTest, ListsEachPodsDevicesOverAllContainersAndResources) {
  sim::TempDir dir{"rdmanet-podres"};
  const auto sock = dir.path() / "kubelet.sock";
  FakeLister lister;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + sock.string(), grpc::InsecureServerCredentials());
  builder.RegisterService(&lister);
  auto server = builder.BuildAndStart();
  ASSERT_TRUE(server);
  auto source = makePodResourcesSource(sock, std::chrono::seconds(5));
  auto pods = source->list();
  ASSERT_TRUE(pods.ok()) << pods.error().msg;
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ((*pods)[0].pod_namespace, "ml");
  EXPECT_EQ((*pods)[0].pod_name, "trainer-0");
  EXPECT_EQ((*pods)[0].device_ids, (std::vector<std::string>{"0000:03:00.2", "GPU-1"}));
  server->Shutdown();
}

TEST(PodResourcesTest, NoKubeletSocketIsTryAgainLater) {
  sim::TempDir dir{"rdmanet-podres"};
  auto pods = makePodResourcesSource(dir.path() / "kubelet.sock", std::chrono::seconds(1))->list();
  ASSERT_FALSE(pods.ok());
  EXPECT_EQ(pods.error().code, ErrorCode::kTryAgainLater);
}

}  // namespace
}  // namespace rdmanet::dp
