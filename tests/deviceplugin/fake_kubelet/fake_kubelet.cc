#include "tests/deviceplugin/fake_kubelet/fake_kubelet.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <thread>

#include "proto/api.grpc.pb.h"
#include "tests/deviceplugin/fake_kubelet/plugin_client.h"
#include "tests/fakes/eventually.h"

namespace rdmanet::fakekubelet {

namespace fs = std::filesystem;
namespace pb = ::v1beta1;

namespace {

// Kubelet accepts extended resource names "<domain>/<name>" outside kubernetes.io.
bool validResourceName(const std::string& r) {
  auto slash = r.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == r.size()) return false;
  std::string domain = r.substr(0, slash);
  return domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io") &&
         r.find('/', slash + 1) == std::string::npos;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void EventLog::emit(const std::string& event, nlohmann::json fields, const std::string& human) {
  int64_t t = nowNs();
  fields["event"] = event;
  fields["t_ns"] = t;
  std::lock_guard lock(mu_);
  if (json_)
    *json_ << fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  if (human_) {
    auto secs = t / 1000000000;
    *human_ << fmt::format("{:02}:{:02}:{:02}.{:03} {:<9} {}", (secs / 3600) % 24, (secs / 60) % 60,
                           secs % 60, (t / 1000000) % 1000, event, human)
            << std::endl;
  }
}

class RegistrationService final : public pb::Registration::Service {
 public:
  explicit RegistrationService(FakeKubelet* k) : k_(k) {}
  grpc::Status Register(grpc::ServerContext*, const pb::RegisterRequest* req, pb::Empty*) override {
    std::string err = k_->onRegister(req->version(), req->endpoint(), req->resource_name(),
                                     req->options().get_preferred_allocation_available());
    // Kubelet answers a refused registration with a plain error (gRPC code UNKNOWN).
    return err.empty() ? grpc::Status::OK : grpc::Status(grpc::StatusCode::UNKNOWN, err);
  }

 private:
  FakeKubelet* k_;
};

struct FakeKubelet::Server {
  explicit Server(FakeKubelet* k) : service(k) {}
  RegistrationService service;
  std::unique_ptr<grpc::Server> server;
};

FakeKubelet::FakeKubelet(fs::path kubelet_dir, EventLog* log)
    : kubelet_dir_(std::move(kubelet_dir)), log_(log) {}

FakeKubelet::~FakeKubelet() { stop(); }

fs::path FakeKubelet::socketDir() const { return kubelet_dir_ / "device-plugins"; }

bool FakeKubelet::start() {
  std::error_code ec;
  fs::create_directories(socketDir(), ec);
  fs::path sock = socketDir() / "kubelet.sock";
  fs::remove(sock, ec);
  auto s = std::make_unique<Server>(this);
  grpc::ServerBuilder b;
  b.AddListeningPort("unix:" + sock.string(), grpc::InsecureServerCredentials());
  b.RegisterService(&s->service);
  s->server = b.BuildAndStart();
  if (!s->server) {
    log_->emit("error", {{"call", "serve"}, {"socket", sock.string()}},
               "cannot serve " + sock.string());
    return false;
  }
  server_ = std::move(s);
  log_->emit("listening", {{"socket", sock.string()}}, "serving Registration on " + sock.string());
  return true;
}

void FakeKubelet::stop() {
  if (server_) {
    server_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
    server_->server->Wait();
    server_.reset();
  }
  std::map<std::string, std::shared_ptr<PluginClient>> clients;
  {
    std::lock_guard lock(mu_);
    clients.swap(clients_);
  }
  for (auto& [_, c] : clients) c->stop();
}

bool FakeKubelet::restart(std::chrono::milliseconds down) {
  log_->emit("restart", {{"phase", "down"}, {"down_ms", down.count()}}, "kubelet going down");
  stop();
  // Like kubelet's device manager on start: every socket in the directory goes.
  std::error_code ec;
  int removed = 0;
  for (const auto& e : fs::directory_iterator(socketDir(), ec)) {
    if (e.is_socket(ec) && fs::remove(e.path(), ec)) ++removed;
  }
  log_->emit("restart", {{"phase", "sockets_removed"}, {"removed", removed}},
             fmt::format("removed {} sockets", removed));
  // Kubelet is away for `down` of real time: the plugin's reaction to a real absence is what a
  // restart test looks at.
  std::this_thread::sleep_for(down);
  return start();
}

void FakeKubelet::setRefuse(bool refuse) {
  std::lock_guard lock(mu_);
  refuse_ = refuse;
}

std::string FakeKubelet::onRegister(const std::string& version, const std::string& endpoint,
                                    const std::string& resource, bool preferred_available) {
  std::string err;
  bool refuse;
  {
    std::lock_guard lock(mu_);
    refuse = refuse_;
  }
  if (version != "v1beta1") {
    err = fmt::format("Requested device plugin version {} is not supported", version);
  } else if (!validResourceName(resource)) {
    err = fmt::format("invalid name of device plugin socket or resource: {}", resource);
  } else if (endpoint.empty() || endpoint.find('/') != std::string::npos) {
    err = fmt::format("invalid endpoint {}", endpoint);
  } else if (refuse) {
    err = "registration refused (fake kubelet told to refuse)";
  }
  std::shared_ptr<PluginClient> c, old;
  if (err.empty()) {
    c = std::make_shared<PluginClient>(resource, socketDir() / endpoint, log_);
    std::lock_guard lock(mu_);
    auto& slot = clients_[resource];
    if (slot && slot->connected()) {
      // Like kubelet (1.37, seen live): one client per resource; while it is connected a
      // second Register for the resource is refused, not taken as a reconnect.
      err = fmt::format("device plugin for {} already connected", resource);
    } else {
      old = std::exchange(slot, c);
    }
  }
  log_->emit("register",
             {{"resource", resource},
              {"endpoint", endpoint},
              {"version", version},
              {"preferred_allocation", preferred_available},
              {"accepted", err.empty()},
              {"error", err}},
             fmt::format("{} at {}: {}", resource, endpoint, err.empty() ? "accepted" : err));
  if (!err.empty()) return err;
  if (old) old->stop();
  c->start();
  return "";
}

std::shared_ptr<PluginClient> FakeKubelet::client(const std::string& resource) {
  std::lock_guard lock(mu_);
  auto it = clients_.find(resource);
  return it == clients_.end() ? nullptr : it->second;
}

std::vector<std::string> FakeKubelet::resources() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [r, _] : clients_) out.push_back(r);
  return out;
}

bool FakeKubelet::waitForDevices(const std::string& resource, std::chrono::milliseconds timeout) {
  return waitForHealthy(resource, -1, -1, timeout);
}

bool FakeKubelet::waitForHealthy(const std::string& resource, int healthy, int total,
                                 std::chrono::milliseconds timeout) {
  // The client is replaced when the plugin re-registers: look it up again each round, waiting
  // on the one there is for a while (it notifies), polling while there is none.
  return rdmanet::testing::eventually(
      [&] {
        auto c = client(resource);
        return c && c->waitFor(std::chrono::milliseconds(50), healthy, total);
      },
      timeout, std::chrono::milliseconds(10));
}

std::vector<DeviceView> FakeKubelet::devices(const std::string& resource) {
  auto c = client(resource);
  return c ? c->devices() : std::vector<DeviceView>{};
}

}  // namespace rdmanet::fakekubelet
