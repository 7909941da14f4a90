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

}  // namespace rdmanet::dp
