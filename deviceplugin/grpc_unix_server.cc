#include "deviceplugin/grpc_unix_server.h"

#include <fmt/format.h>
#include <grpcpp/support/server_interceptor.h>

#include <chrono>
#include <string>

#include "deviceplugin/grpc_deadline.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

namespace {

// gRPC's sync server catches what a handler throws and answers UNKNOWN "Unexpected error in RPC
// handling", saying nothing more: this says which call it was, once per throw, so a handler that
// throws (kubelet's input, a name the node holds) shows in the log while the server goes on.
class ThrowLogger final : public grpc::experimental::Interceptor {
 public:
  explicit ThrowLogger(std::string method) : method_(std::move(method)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
    if (m->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status st = m->GetSendStatus();
      if (st.error_code() == grpc::StatusCode::UNKNOWN &&
          st.error_message() == "Unexpected error in RPC handling") {
        logger(Component::kServer)
            ->error("gRPC {}: the handler threw; answered UNKNOWN, serving goes on", method_);
      }
    }
    m->Proceed();
  }

 private:
  const std::string method_;
};

class ThrowLoggerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new ThrowLogger(info->method() != nullptr ? info->method() : "?");
  }
};

}  // namespace

Result<std::unique_ptr<grpc::Server>> startUnixServer(
    const fs::path& socket, std::initializer_list<grpc::Service*> services) {
  // sun_path holds 107 bytes plus NUL.
  if (socket.string().size() > 107) {
    return makeError(ErrorCode::kIoFailure,
                     fmt::format("socket path {} is {} bytes, longer than the 107 unix sockets "
                                 "allow",
                                 socket.string(), socket.string().size()));
  }
  std::error_code ec;
  fs::remove(socket, ec);  // a stale socket from a previous run would make bind fail
  grpc::ServerBuilder b;
  b.AddListeningPort("unix:" + socket.string(), grpc::InsecureServerCredentials());
  for (grpc::Service* s : services) b.RegisterService(s);
  b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<ThrowLoggerFactory>());
  b.experimental().SetInterceptorCreators(std::move(interceptors));
  auto server = b.BuildAndStart();
  if (!server) {
    return makeError(ErrorCode::kIoFailure, fmt::format("cannot serve on {}", socket.string()));
  }
  fs::permissions(socket, fs::perms::owner_read | fs::perms::owner_write, ec);
  return server;
}

void stopUnixServer(std::unique_ptr<grpc::Server>& server, const fs::path& socket) {
  if (!server) return;
  server->Shutdown(grpcSpan(std::chrono::milliseconds(200)));
  server->Wait();
  server.reset();
  std::error_code ec;
  fs::remove(socket, ec);
}

Status UnixServer::start(const fs::path& socket, std::initializer_list<grpc::Service*> services) {
  RDMANET_ASSIGN_OR_RETURN(server_, startUnixServer(socket, services));
  socket_ = socket;
  return okStatus();
}

}  // namespace rdmanet::dp
