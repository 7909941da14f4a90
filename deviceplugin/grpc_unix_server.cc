#include "deviceplugin/grpc_unix_server.h"

#include <fmt/format.h>

#include <chrono>

namespace rdmanet::dp {

namespace fs = std::filesystem;

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
  auto server = b.BuildAndStart();
  if (!server) {
    return makeError(ErrorCode::kIoFailure, fmt::format("cannot serve on {}", socket.string()));
  }
  fs::permissions(socket, fs::perms::owner_read | fs::perms::owner_write, ec);
  return server;
}

void stopUnixServer(std::unique_ptr<grpc::Server>& server, const fs::path& socket) {
  if (!server) return;
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server->Wait();
  server.reset();
  std::error_code ec;
  fs::remove(socket, ec);
}

}  // namespace rdmanet::dp
