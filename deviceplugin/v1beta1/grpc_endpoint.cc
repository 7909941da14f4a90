// The DevicePlugin gRPC service of one pool. Translation only: decisions live in ResourcePool.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "deviceplugin/grpc_unix_server.h"
#include "deviceplugin/logging.h"
#include "deviceplugin/v1beta1/endpoint.h"
#include "proto/api.grpc.pb.h"

namespace rdmanet::dp {

namespace {

namespace fs = std::filesystem;
namespace pb = ::v1beta1;

// Errors become gRPC codes here, at the boundary, and nowhere else (CONTRIBUTING.md, "Errors").
grpc::Status toGrpc(const Error& e) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (e.code) {
    case ErrorCode::kInvalidConfig:
    case ErrorCode::kDecodeFailure:
    case ErrorCode::kUnsupportedField:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case ErrorCode::kDeviceNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case ErrorCode::kTryAgainLater:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    default:
      break;
  }
  return grpc::Status(code, e.msg);
}

void fillDevices(const PoolSnapshot& snap, bool exclude_topology, pb::ListAndWatchResponse* out) {
  for (const PoolDevice& d : snap.devices) {
    pb::Device* pd = out->add_devices();
    pd->set_id(d.id);
    pd->set_health(d.healthy ? "Healthy" : "Unhealthy");
    // No TopologyInfo at all (rather than node -1) lets kubelet's Topology Manager treat the
    // device as usable from any NUMA node.
    if (!exclude_topology && d.numa_node >= 0)
      pd->mutable_topology()->add_nodes()->set_id(d.numa_node);
  }
}

class PoolService final : public pb::DevicePlugin::Service {
 public:
  PoolService(std::shared_ptr<ResourcePool> pool, const std::atomic<bool>* stopping)
      : pool_(std::move(pool)), stopping_(stopping), log_(logger(Component::kServer)) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const pb::Empty*,
                                      pb::DevicePluginOptions* out) override {
    out->set_pre_start_required(false);
    out->set_get_preferred_allocation_available(true);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const pb::Empty*,
                            grpc::ServerWriter<pb::ListAndWatchResponse>* writer) override {
    streams_.fetch_add(1);
    struct Closed {
      std::atomic<int>& n;
      ~Closed() { n.fetch_sub(1); }
    } closed{streams_};
    const bool exclude = pool_->config().exclude_topology;
    PoolSnapshot snap = pool_->snapshot();
    log_->info("{}: ListAndWatch opened, {} devices ({} healthy)", pool_->resourceName(),
               snap.devices.size(),
               std::count_if(snap.devices.begin(), snap.devices.end(),
                             [](const PoolDevice& d) { return d.healthy; }));
    while (true) {
      pb::ListAndWatchResponse resp;
      fillDevices(snap, exclude, &resp);
      if (!writer->Write(resp)) {
        log_->info("{}: ListAndWatch closed by kubelet", pool_->resourceName());
        return grpc::Status::OK;
      }
      // Sync gRPC cannot wake us on client cancellation, so the wait is sliced to notice it;
      // health updates and stop() wake it at once.
      std::optional<PoolSnapshot> next;
      while (!next) {
        if (stopping_->load() || pool_->stopped()) return grpc::Status::OK;
        if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
        next = pool_->waitNewer(snap.version, std::chrono::milliseconds(500), stopping_);
      }
      snap = std::move(*next);
    }
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*,
                                      const pb::PreferredAllocationRequest* req,
                                      pb::PreferredAllocationResponse* out) override {
    for (const auto& c : req->container_requests()) {
      if (c.allocation_size() < 0) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "negative allocation_size");
      }
      std::vector<std::string> avail(c.available_deviceids().begin(),
                                     c.available_deviceids().end());
      std::vector<std::string> must(c.must_include_deviceids().begin(),
                                    c.must_include_deviceids().end());
      auto ids = pool_->preferred(avail, must, c.allocation_size());
      auto* r = out->add_container_responses();
      for (auto& id : ids) r->add_deviceids(std::move(id));
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const pb::AllocateRequest* req,
                        pb::AllocateResponse* out) override {
    std::vector<std::vector<std::string>> containers;
    for (const auto& c : req->container_requests()) {
      containers.emplace_back(c.devices_ids().begin(), c.devices_ids().end());
    }
    auto r = pool_->allocate(containers);
    if (!r.ok()) {
      log_->warn("{}: Allocate refused: {}", pool_->resourceName(), r.error().msg);
      return toGrpc(r.error());
    }
    for (size_t i = 0; i < r->size(); ++i) {
      const ContainerAllocation& a = (*r)[i];
      auto* cr = out->add_container_responses();
      for (const auto& [k, v] : a.envs) (*cr->mutable_envs())[k] = v;
      for (const auto& n : a.devices) {
        auto* ds = cr->add_devices();
        ds->set_container_path(n.container_path);
        ds->set_host_path(n.host_path);
        ds->set_permissions(n.permissions);
      }
      for (const auto& name : a.cdi_devices) cr->add_cdi_devices()->set_name(name);
      for (const auto& m : a.mounts) {
        auto* ms = cr->add_mounts();
        ms->set_container_path(m.container_path);
        ms->set_host_path(m.host_path);
        ms->set_read_only(m.read_only);
      }
      log_->info("{}: Allocate {}", pool_->resourceName(), fmt::join(containers[i], ","));
    }
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*, const pb::PreStartContainerRequest*,
                                 pb::PreStartContainerResponse*) override {
    return grpc::Status::OK;  // not requested (pre_start_required = false)
  }

  bool watched() const { return streams_.load() > 0; }

 private:
  std::atomic<int> streams_{0};  // open ListAndWatch streams
  std::shared_ptr<ResourcePool> pool_;
  const std::atomic<bool>* stopping_;
  std::shared_ptr<spdlog::logger> log_;
};

class GrpcEndpoint final : public Endpoint {
 public:
  explicit GrpcEndpoint(std::shared_ptr<ResourcePool> pool)
      : pool_(pool), service_(std::move(pool), &stopping_) {}
  ~GrpcEndpoint() override { stop(); }

  Status start(const fs::path& socket) { return server_.start(socket, {&service_}); }

  bool watched() const override { return service_.watched(); }

  void stop() override {
    if (!server_.serving()) return;
    stopping_ = true;
    pool_->kick();
    server_.stop();
  }

 private:
  std::shared_ptr<ResourcePool> pool_;
  std::atomic<bool> stopping_{false};
  PoolService service_;
  UnixServer server_;
};

class GrpcEndpointFactory final : public EndpointFactory {
 public:
  Result<std::unique_ptr<Endpoint>> serve(const fs::path& socket,
                                          std::shared_ptr<ResourcePool> pool) override {
    auto ep = std::make_unique<GrpcEndpoint>(std::move(pool));
    RDMANET_RETURN_IF_ERROR(ep->start(socket));
    return std::unique_ptr<Endpoint>(std::move(ep));
  }
};

}  // namespace

std::unique_ptr<EndpointFactory> makeGrpcEndpointFactory() {
  return std::make_unique<GrpcEndpointFactory>();
}

}  // namespace rdmanet::dp
