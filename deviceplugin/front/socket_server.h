#pragma once
// SocketServer: what a front holds of a server it started on a unix socket in the kubelet dir
// (a device-plugin endpoint, the DRA plugin and registration sockets). The front only stops
// it; the gRPC behind it stays in the fronts' grpc_* files (grpc_unix_server.h serves it).

namespace rdmanet::dp {

class SocketServer {
 public:
  virtual ~SocketServer() = default;
  // Ends open streams, stops serving and removes the socket. Idempotent.
  virtual void stop() = 0;
};

}  // namespace rdmanet::dp
