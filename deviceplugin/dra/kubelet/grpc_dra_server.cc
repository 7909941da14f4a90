// DRAPlugin and DRAResourceHealth over ClaimPreparer and DeviceState. Translation only.
#include "deviceplugin/dra/kubelet/grpc_dra_server.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "deviceplugin/grpc_deadline.h"
#include "deviceplugin/grpc_unix_server.h"
#include "deviceplugin/logging.h"
#include "proto/kubelet/dra-health/v1/api.grpc.pb.h"
#include "proto/kubelet/dra/v1/api.grpc.pb.h"

namespace rdmanet::dp {

namespace {

namespace fs = std::filesystem;
namespace dra = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace health = ::v1;

// kubelet truncates longer messages; do it here so the cut is ours.
constexpr size_t kMaxHealthMessage = 1024;

ClaimRef refOf(const dra::Claim& c) {
  return {.ns = c.namespace_(), .uid = c.uid(), .name = c.name()};
}

class DraPluginService final : public dra::DRAPlugin::Service {
 public:
  // Kubelet's deadlines are measured on `clock`.
  DraPluginService(ReportedPreparer& preparer, const Clock& clock)
      : preparer_(preparer), clock_(clock), log_(logger(Component::kServer)) {}

  // Every claim gets an entry: an error in its own `error`, never for the whole call.
  grpc::Status NodePrepareResources(grpc::ServerContext* ctx,
                                    const dra::NodePrepareResourcesRequest* req,
                                    dra::NodePrepareResourcesResponse* out) override {
    // Kubelet gives up on the call at its deadline (45 s): no claim may be committed after it.
    const Deadline deadline = deadlineOf(*ctx, clock_);
    for (const dra::Claim& c : req->claims()) {
      dra::NodePrepareResourceResponse& r = (*out->mutable_claims())[c.uid()];
      auto p = preparer_.prepare(refOf(c), deadline);
      if (!p.ok()) {
        log_->warn("prepare {}/{} ({}): {}", c.namespace_(), c.name(), c.uid(), p.error().msg);
        r.set_error(p.error().msg);
        continue;
      }
      std::vector<std::string> names;
      for (const PreparedDevice& d : p->devices) {
        dra::Device* pd = r.add_devices();
        for (const auto& n : d.request_names) pd->add_request_names(n);
        pd->set_pool_name(d.pool_name);
        pd->set_device_name(d.device_name);
        for (const auto& id : d.cdi_device_ids) pd->add_cdi_device_ids(id);
        names.push_back(d.device_name);
      }
      log_->info("prepared {}/{} ({}): {}", c.namespace_(), c.name(), c.uid(),
                 fmt::join(names, ","));
    }
    return grpc::Status::OK;
  }

  grpc::Status NodeUnprepareResources(grpc::ServerContext*,
                                      const dra::NodeUnprepareResourcesRequest* req,
                                      dra::NodeUnprepareResourcesResponse* out) override {
    for (const dra::Claim& c : req->claims()) {
      dra::NodeUnprepareResourceResponse& r = (*out->mutable_claims())[c.uid()];
      if (auto st = preparer_.unprepare(refOf(c)); !st.ok()) {
        log_->warn("unprepare {}/{} ({}): {}", c.namespace_(), c.name(), c.uid(), st.error().msg);
        r.set_error(st.error().msg);
      } else {
        log_->info("unprepared {}/{} ({})", c.namespace_(), c.name(), c.uid());
      }
    }
    return grpc::Status::OK;
  }

 private:
  ReportedPreparer& preparer_;
  const Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
};

class HealthService final : public health::DRAResourceHealth::Service {
 public:
  HealthService(const DraServerOptions& opts, const DeviceState& state, const Clock& clock,
                const std::atomic<bool>* stopping)
      : opts_(opts),
        state_(state),
        clock_(clock),
        stopping_(stopping),
        log_(logger(Component::kHealth)) {}

  grpc::Status NodeWatchResources(
      grpc::ServerContext* ctx, const health::NodeWatchResourcesRequest*,
      grpc::ServerWriter<health::NodeWatchResourcesResponse>* writer) override {
    // Sync gRPC cannot wake a waiter on cancellation or on the server's stop: each wait ends
    // after kPollSlice on the clock, or sooner when the clock's wait looks at `ended` (the
    // FakeClock does), to notice either.
    auto ended = [&] { return stopping_->load() || ctx->IsCancelled(); };
    auto wait = [&](uint64_t seen, Clock::time_point until) {
      return state_.waitNewer(seen, clock_, std::min(until, clock_.now() + kPollSlice), ended)
          .value;
    };
    // Kubelet takes the first message as the state of every device. A stream opened before the
    // daemon's first scan reached the front (dra.sock is served from start-up) would list none:
    // the first message waits for the first published version.
    auto inv = state_.current().value;
    while (inv->version == 0) {
      auto first = wait(0, Clock::time_point::max());
      if (stopping_->load() || state_.stopped()) return grpc::Status::OK;
      if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
      if (first) inv = std::move(first);
    }
    log_->info("NodeWatchResources opened: {} devices", inv->devices.size());
    auto sent_at = clock_.now();
    if (!writer->Write(response(*inv))) return grpc::Status::OK;
    while (true) {
      const auto resend_at = sent_at + opts_.health_resend;
      auto next = wait(inv->version, resend_at);
      if (stopping_->load() || state_.stopped()) return grpc::Status::OK;
      if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
      const auto now = clock_.now();
      if (!next && now < resend_at) continue;
      if (next) inv = std::move(next);
      sent_at = now;
      if (!writer->Write(response(*inv))) {
        log_->info("NodeWatchResources closed by kubelet");
        return grpc::Status::OK;
      }
    }
  }

 private:
  // The complete list: kubelet treats a device missing from it as Unknown.
  health::NodeWatchResourcesResponse response(const DeviceSnapshot& inv) const {
    health::NodeWatchResourcesResponse out;
    const int64_t now =
        std::chrono::duration_cast<std::chrono::seconds>(wallNow().time_since_epoch()).count();
    for (const NodeDevice& d : inv.devices) {
      health::DeviceHealth* h = out.add_devices();
      h->mutable_device()->set_pool_name(opts_.node);
      h->mutable_device()->set_device_name(d.name);
      h->set_health(d.healthy() ? health::HEALTHY : health::UNHEALTHY);
      h->set_last_updated_time(now);
      if (!d.healthy()) h->set_message(d.device.fault.substr(0, kMaxHealthMessage));
    }
    return out;
  }

  static constexpr std::chrono::milliseconds kPollSlice{250};

  const DraServerOptions opts_;
  const DeviceState& state_;
  const Clock& clock_;
  const std::atomic<bool>* stopping_;
  std::shared_ptr<spdlog::logger> log_;
};

class DraServer final : public SocketServer {
 public:
  DraServer(const DraServerOptions& opts, ReportedPreparer& preparer, const DeviceState& state,
            const Clock& clock)
      : plugin_(preparer, clock), health_(opts, state, clock, &stopping_) {}
  ~DraServer() override { stop(); }

  Status start(const fs::path& socket) { return server_.start(socket, {&plugin_, &health_}); }
  void stop() override {
    stopping_ = true;
    server_.stop();
  }

 private:
  std::atomic<bool> stopping_{false};
  DraPluginService plugin_;
  HealthService health_;
  UnixServer server_;
};

}  // namespace

Result<std::unique_ptr<SocketServer>> serveDra(const fs::path& socket, const DraServerOptions& opts,
                                               ReportedPreparer& preparer, const DeviceState& state,
                                               const Clock& clock) {
  auto s = std::make_unique<DraServer>(opts, preparer, state, clock);
  RDMANET_RETURN_IF_ERROR(s->start(socket));
  return std::unique_ptr<SocketServer>(std::move(s));
}

}  // namespace rdmanet::dp
