// Registration.Register against kubelet's socket.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "deviceplugin/kubelet_client.h"
#include "deviceplugin/v1beta1/endpoint.h"
#include "proto/api.grpc.pb.h"

namespace rdmanet::dp {

namespace {

class GrpcRegistrar final : public KubeletRegistrar {
 public:
  explicit GrpcRegistrar(std::chrono::milliseconds deadline) : deadline_(deadline) {}

  Status registerPool(const std::filesystem::path& kubelet_socket,
                      const Registration& reg) override {
    RDMANET_ASSIGN_OR_RETURN(
        auto channel,
        kubeletChannel(kubelet_socket,
                       fmt::format("kubelet is not there ({} missing)", kubelet_socket.string())));
    auto stub = ::v1beta1::Registration::NewStub(channel);
    ::v1beta1::RegisterRequest req;
    req.set_version(std::string(kApiVersion));
    req.set_endpoint(reg.endpoint);
    req.set_resource_name(reg.resource_name);
    req.mutable_options()->set_pre_start_required(false);
    req.mutable_options()->set_get_preferred_allocation_available(true);
    ::v1beta1::Empty resp;
    grpc::ClientContext ctx;
    setDeadlineIn(ctx, deadline_);
    grpc::Status st = stub->Register(&ctx, req, &resp);
    if (st.ok()) return okStatus();
    const bool absent = kubeletUnreachable(st);
    return makeError(absent ? ErrorCode::kTryAgainLater : ErrorCode::kInvalidConfig,
                     fmt::format("kubelet {} registration of {}: {} ({})",
                                 absent ? "unreachable for" : "refused", reg.resource_name,
                                 st.error_message(), static_cast<int>(st.error_code())));
  }

 private:
  std::chrono::milliseconds deadline_;
};

}  // namespace

std::unique_ptr<KubeletRegistrar> makeGrpcRegistrar(std::chrono::milliseconds deadline) {
  return std::make_unique<GrpcRegistrar>(deadline);
}

}  // namespace rdmanet::dp
