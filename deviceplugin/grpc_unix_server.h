#pragma once
// Serving gRPC services on a unix socket in the kubelet dir, as every kubelet-facing server here
// does (the device-plugin endpoints, the DRA registration and plugin sockets): the socket path
// length checked (gRPC only logs it), a stale file replaced, the socket 0600 (only kubelet, as
// root, talks to it), few pollers (a handful of calls per pod start), and a handler that throws
// logged by its method (gRPC answers it UNKNOWN and goes on). The directory must exist: callers
// decide whether a vanished kubelet directory is waited for.

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <initializer_list>
#include <memory>

#include "common/base/result.h"

namespace rdmanet::dp {

Result<std::unique_ptr<grpc::Server>> startUnixServer(
    const std::filesystem::path& socket, std::initializer_list<grpc::Service*> services);
// Shuts the server down (open calls get 200 ms), waits, removes the socket. Null is a no-op.
void stopUnixServer(std::unique_ptr<grpc::Server>& server, const std::filesystem::path& socket);

// The server and its socket, as each kubelet-facing server holds them: start() serves as
// startUnixServer does, stop() (and destruction) as stopUnixServer does. The services must
// outlive it; a holder whose streams wait on a flag sets it before stop().
class UnixServer {
 public:
  UnixServer() = default;
  UnixServer(const UnixServer&) = delete;
  UnixServer& operator=(const UnixServer&) = delete;
  ~UnixServer() { stop(); }

  Status start(const std::filesystem::path& socket, std::initializer_list<grpc::Service*> services);
  bool serving() const { return server_ != nullptr; }
  void stop() { stopUnixServer(server_, socket_); }

 private:
  std::filesystem::path socket_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace rdmanet::dp
