#include "tests/deviceplugin/fake_kubelet/plugin_client.h"

#include <fmt/format.h>

namespace rdmanet::fakekubelet {

namespace fs = std::filesystem;
namespace pb = ::v1beta1;

std::string grpcCodeName(grpc::StatusCode c) {
  static const char* kNames[] = {"OK",
                                 "CANCELLED",
                                 "UNKNOWN",
                                 "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED",
                                 "NOT_FOUND",
                                 "ALREADY_EXISTS",
                                 "PERMISSION_DENIED",
                                 "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION",
                                 "ABORTED",
                                 "OUT_OF_RANGE",
                                 "UNIMPLEMENTED",
                                 "INTERNAL",
                                 "UNAVAILABLE",
                                 "DATA_LOSS",
                                 "UNAUTHENTICATED"};
  int i = static_cast<int>(c);
  return i >= 0 && i < 17 ? kNames[i] : std::to_string(i);
}

nlohmann::json grpcErrorJson(const grpc::Status& st) {
  return {{"code", grpcCodeName(st.error_code())}, {"message", st.error_message()}};
}

PluginClient::PluginClient(std::string resource, fs::path socket, EventLog* log)
    : resource_(std::move(resource)), socket_(std::move(socket)), log_(log) {
  channel_ = grpc::CreateChannel("unix:" + socket_.string(), grpc::InsecureChannelCredentials());
  stub_ = pb::DevicePlugin::NewStub(channel_);
}

PluginClient::~PluginClient() { stop(); }

void PluginClient::start() {
  thread_ = std::thread([this] {
    run();
    std::lock_guard lock(mu_);
    ended_ = true;
  });
}

bool PluginClient::connected() {
  std::lock_guard lock(mu_);
  return !ended_ && !stopped_;
}

void PluginClient::stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    if (stream_ctx_) stream_ctx_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

bool PluginClient::waitFor(std::chrono::milliseconds timeout, int healthy, int total) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    if (!got_list_) return false;
    if (healthy < 0) return true;
    int h = 0;
    for (const auto& d : devices_) h += d.health == "Healthy";
    return h == healthy && (total < 0 || static_cast<int>(devices_.size()) == total);
  });
}

std::vector<DeviceView> PluginClient::devices() {
  std::lock_guard lock(mu_);
  return devices_;
}

void PluginClient::run() {
  pb::Empty empty;
  pb::DevicePluginOptions opts;
  grpc::ClientContext octx;
  octx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status st = stub_->GetDevicePluginOptions(&octx, empty, &opts);
  if (!st.ok()) {
    log_->emit(
        "error",
        {{"resource", resource_}, {"call", "GetDevicePluginOptions"}, {"error", grpcErrorJson(st)}},
        fmt::format("{}: GetDevicePluginOptions: {}", resource_, st.error_message()));
    return;
  }
  auto ctx = std::make_unique<grpc::ClientContext>();
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stream_ctx_ = ctx.get();
  }
  auto reader = stub_->ListAndWatch(ctx.get(), empty);
  pb::ListAndWatchResponse resp;
  int seq = 0;
  while (reader->Read(&resp)) {
    std::vector<DeviceView> devs;
    nlohmann::json list = nlohmann::json::array();
    int healthy = 0;
    std::string sick;
    for (const auto& d : resp.devices()) {
      DeviceView v{d.id(), d.health(), {}};
      for (const auto& n : d.topology().nodes()) v.numa.push_back(n.id());
      healthy += v.health == "Healthy";
      if (v.health != "Healthy") sick += (sick.empty() ? "" : ",") + v.id;
      list.push_back({{"id", v.id}, {"health", v.health}, {"numa", v.numa}});
      devs.push_back(std::move(v));
    }
    int total = resp.devices_size();
    log_->emit("devices",
               {{"resource", resource_},
                {"seq", ++seq},
                {"count", total},
                {"healthy", healthy},
                {"unhealthy", total - healthy},
                {"devices", list}},
               fmt::format("{}: {} devices, {} healthy{}", resource_, total, healthy,
                           sick.empty() ? "" : " (unhealthy: " + sick + ")"));
    {
      std::lock_guard lock(mu_);
      devices_ = std::move(devs);
      got_list_ = true;
    }
    cv_.notify_all();
  }
  grpc::Status end = reader->Finish();
  {
    std::lock_guard lock(mu_);
    stream_ctx_ = nullptr;
  }
  log_->emit(
      "stream_end", {{"resource", resource_}, {"status", grpcErrorJson(end)}},
      fmt::format("{}: ListAndWatch ended: {}", resource_, end.ok() ? "OK" : end.error_message()));
}

}  // namespace rdmanet::fakekubelet
