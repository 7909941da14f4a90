// pluginregistration.Registration: what kubelet's plugin watcher asks a plugin that put a socket
// into plugins_registry. GetInfo first; then NotifyRegistrationStatus says whether kubelet took
// the plugin.
#include <grpcpp/grpcpp.h>

#include "deviceplugin/dra/kubelet/grpc_dra_server.h"
#include "deviceplugin/grpc_unix_server.h"
#include "proto/kubelet/pluginregistration/v1/api.grpc.pb.h"

namespace rdmanet::dp {

namespace {

namespace fs = std::filesystem;
namespace reg = ::pluginregistration;

class RegistrationService final : public reg::Registration::Service {
 public:
  RegistrationService(PluginInfo info, RegistrationCallback on_status)
      : info_(std::move(info)), on_status_(std::move(on_status)) {}

  grpc::Status GetInfo(grpc::ServerContext*, const reg::InfoRequest*,
                       reg::PluginInfo* out) override {
    out->set_type(std::string(kDraPluginType));
    out->set_name(info_.name);
    out->set_endpoint(info_.endpoint);
    out->add_supported_versions(std::string(kDraPluginVersion));
    return grpc::Status::OK;
  }

  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*, const reg::RegistrationStatus* st,
                                        reg::RegistrationStatusResponse*) override {
    on_status_(st->plugin_registered(), st->error());
    return grpc::Status::OK;
  }

 private:
  const PluginInfo info_;
  const RegistrationCallback on_status_;
};

class RegistrationServer final : public SocketServer {
 public:
  RegistrationServer(PluginInfo info, RegistrationCallback on_status)
      : service_(std::move(info), std::move(on_status)) {}
  ~RegistrationServer() override { stop(); }

  Status start(const fs::path& socket) { return server_.start(socket, {&service_}); }
  void stop() override { server_.stop(); }

 private:
  RegistrationService service_;
  UnixServer server_;
};

}  // namespace

Result<std::unique_ptr<SocketServer>> serveRegistration(const fs::path& socket, PluginInfo info,
                                                        RegistrationCallback on_status) {
  auto s = std::make_unique<RegistrationServer>(std::move(info), std::move(on_status));
  RDMANET_RETURN_IF_ERROR(s->start(socket));
  return std::unique_ptr<SocketServer>(std::move(s));
}

}  // namespace rdmanet::dp
