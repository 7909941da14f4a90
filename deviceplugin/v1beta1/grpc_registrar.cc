// Registration.Register against kubelet's socket.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "deviceplugin/v1beta1/endpoint.h"
#include "proto/api.grpc.pb.h"

namespace rdmanet::dp {

namespace {

class GrpcRegistrar final : public KubeletRegistrar {
 public:
  explicit GrpcRegistrar(std::chrono::milliseconds deadline) : deadline_(deadline) {}

  Status registerPool(const std::filesystem::path& kubelet_socket,
                      const Registration& reg) override {
    std::error_code ec;
    if (!std::filesystem::exists(kubelet_socket, ec)) {
      return makeError(ErrorCode::kTryAgainLater,
                       fmt::format("kubelet is not there ({} missing)", kubelet_socket.string()));
    }
    // A fresh channel per attempt: after a kubelet restart an old channel would keep
    // reconnecting with backoff to a socket inode that no longer exists.
    auto channel =
        grpc::CreateChannel("unix:" + kubelet_socket.string(), grpc::InsecureChannelCredentials());
    auto stub = ::v1beta1::Registration::NewStub(channel);
    ::v1beta1::RegisterRequest req;
    req.set_version(std::string(kApiVersion));
    req.set_endpoint(reg.endpoint);
    req.set_resource_name(reg.resource_name);
    req.mutable_options()->set_pre_start_required(false);
    req.mutable_options()->set_get_preferred_allocation_available(true);
    ::v1beta1::Empty resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + deadline_);
    grpc::Status st = stub->Register(&ctx, req, &resp);
    if (st.ok()) return okStatus();
    bool absent = st.error_code() == grpc::StatusCode::UNAVAILABLE ||
                  st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
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
