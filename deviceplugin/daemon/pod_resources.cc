#include "deviceplugin/daemon/pod_resources.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/kubelet_client.h"
#include "proto/kubelet/podresources/v1/api.grpc.pb.h"

namespace rdmanet::dp {
namespace {

class GrpcPodResources final : public podnet::KubeletPodSource {
 public:
  GrpcPodResources(std::filesystem::path socket, std::chrono::milliseconds deadline,
                   std::string dra_driver)
      : socket_(std::move(socket)), deadline_(deadline), dra_driver_(std::move(dra_driver)) {}

  Result<std::vector<podnet::KubeletPod>> list() override {
    RDMANET_ASSIGN_OR_RETURN(
        auto channel, kubeletChannel(socket_, fmt::format("no kubelet pod-resources socket at {}",
                                                          socket_.string())));
    auto stub = ::v1::PodResourcesLister::NewStub(channel);
    ::v1::ListPodResourcesRequest req;
    ::v1::ListPodResourcesResponse resp;
    grpc::ClientContext ctx;
    setDeadlineIn(ctx, deadline_);
    const grpc::Status st = stub->List(&ctx, req, &resp);
    if (!st.ok()) {
      return makeError(
          kubeletUnreachable(st) ? ErrorCode::kTryAgainLater : ErrorCode::kNetlinkFailure,
          fmt::format("kubelet pod-resources List: {} ({})", st.error_message(),
                      static_cast<int>(st.error_code())));
    }
    std::vector<podnet::KubeletPod> out;
    out.reserve(static_cast<size_t>(resp.pod_resources_size()));
    for (const auto& p : resp.pod_resources()) {
      podnet::KubeletPod pod{.pod_namespace = p.namespace_(), .pod_name = p.name()};
      for (const auto& c : p.containers()) {
        for (const auto& d : c.devices()) {
          pod.device_ids.insert(pod.device_ids.end(), d.device_ids().begin(), d.device_ids().end());
        }
        for (const auto& claim : c.dynamic_resources()) {
          for (const auto& r : claim.claim_resources()) {
            if (r.driver_name() != dra_driver_) continue;
            if (auto pci = dra::pciOfDeviceName(r.device_name()))
              pod.device_ids.push_back(pci->str());
          }
        }
      }
      if (!pod.device_ids.empty()) out.push_back(std::move(pod));
    }
    return out;
  }

 private:
  std::filesystem::path socket_;
  std::chrono::milliseconds deadline_;
  std::string dra_driver_;
};

}  // namespace

std::unique_ptr<podnet::KubeletPodSource> makePodResourcesSource(std::filesystem::path socket,
                                                                 std::chrono::milliseconds deadline,
                                                                 std::string dra_driver) {
  return std::make_unique<GrpcPodResources>(std::move(socket), deadline, std::move(dra_driver));
}

}  // namespace rdmanet::dp
