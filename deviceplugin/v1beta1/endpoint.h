#pragma once
// The two gRPC roles of the plugin, behind interfaces so the daemon loop stays plain C++:
// - Endpoint: serves one pool's DevicePlugin service on a unix socket in the kubelet dir;
// - KubeletRegistrar: calls kubelet's Registration.Register for one pool.
// The production implementations (grpc_endpoint.cc, grpc_registrar.cc) are the only
// daemon files that include gRPC headers.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "common/base/result.h"
#include "deviceplugin/front/socket_server.h"
#include "deviceplugin/pools/resource_pool.h"

namespace rdmanet::dp {

inline constexpr std::string_view kApiVersion = "v1beta1";
inline constexpr std::string_view kKubeletSocket = "kubelet.sock";

// stop() ends the open ListAndWatch streams too.
class Endpoint : public SocketServer {
 public:
  // Kubelet has a ListAndWatch stream open on it: kubelet holds this endpoint as connected.
  virtual bool watched() const { return false; }
};

class EndpointFactory {
 public:
  virtual ~EndpointFactory() = default;
  // Starts serving `pool` on `socket` (a stale file there is replaced). Error 5 when the socket
  // cannot be bound. The endpoint reads the pool; it never changes it.
  virtual Result<std::unique_ptr<Endpoint>> serve(const std::filesystem::path& socket,
                                                  std::shared_ptr<ResourcePool> pool) = 0;
};

struct Registration {
  std::string endpoint;       // socket file name, relative to the device-plugins dir
  std::string resource_name;  // "rdma/vf"
};

class KubeletRegistrar {
 public:
  virtual ~KubeletRegistrar() = default;
  // Blocks until kubelet answers or the registrar's deadline passes. Errors: 11 when kubelet
  // is not there (no socket, connection refused, deadline), 7 when kubelet refused the
  // registration (its message is kept).
  virtual Status registerPool(const std::filesystem::path& kubelet_socket,
                              const Registration& reg) = 0;
};

std::unique_ptr<EndpointFactory> makeGrpcEndpointFactory();
std::unique_ptr<KubeletRegistrar> makeGrpcRegistrar(std::chrono::milliseconds deadline);

}  // namespace rdmanet::dp
