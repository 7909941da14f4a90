#include "deviceplugin/kubelet_client.h"

#include <system_error>
#include <utility>

#include "deviceplugin/grpc_deadline.h"

namespace rdmanet::dp {

Result<std::shared_ptr<grpc::Channel>> kubeletChannel(const std::filesystem::path& socket,
                                                      std::string absent) {
  std::error_code ec;
  if (!std::filesystem::exists(socket, ec)) {
    return makeError(ErrorCode::kTryAgainLater, std::move(absent));
  }
  return grpc::CreateChannel("unix:" + socket.string(), grpc::InsecureChannelCredentials());
}

void setDeadlineIn(grpc::ClientContext& ctx, std::chrono::milliseconds timeout) {
  ctx.set_deadline(grpcSpan(timeout));
}

bool kubeletUnreachable(const grpc::Status& st) {
  return st.error_code() == grpc::StatusCode::UNAVAILABLE ||
         st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

}  // namespace rdmanet::dp
