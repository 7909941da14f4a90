#include "tests/deviceplugin/dra/fake_dra_kubelet.h"

#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>

#include "proto/kubelet/dra-health/v1/api.grpc.pb.h"
#include "proto/kubelet/dra/v1/api.grpc.pb.h"
#include "proto/kubelet/pluginregistration/v1/api.grpc.pb.h"

namespace rdmanet::dp::testing {

namespace fs = std::filesystem;
namespace dra = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace reg = ::pluginregistration;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<grpc::Channel> dial(const std::string& socket) {
  // A socket appears at bind(), a moment before listen(): reconnect quickly rather than after
  // gRPC's default 1 s backoff.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<grpc::ClientContext> callContext(std::chrono::milliseconds timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  // Each call dials afresh; a connection attempt that fails on a loaded machine (the HTTP/2
  // handshake timing out) is tried again until the deadline, as kubelet tries a prepare again,
  // instead of failing the call at once. A call already sent still fails when the daemon dies.
  ctx->set_wait_for_ready(true);
  return ctx;
}

}  // namespace

FakeDraKubelet::FakeDraKubelet(fs::path kubelet_dir) : kubelet_dir_(std::move(kubelet_dir)) {}

FakeDraKubelet::~FakeDraKubelet() { stop(); }

bool FakeDraKubelet::start() {
  const fs::path dir = kubelet_dir_ / "plugins_registry";
  std::error_code ec;
  fs::create_directories(dir, ec);
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (inotify_fd_ < 0 || stop_fd_ < 0) return false;
  // Kubelet's watcher reacts to creations only (a socket being replaced shows up as one).
  if (inotify_add_watch(inotify_fd_, dir.c_str(), IN_CREATE) < 0) return false;
  watcher_ = std::thread([this, dir] {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_socket()) continue;
      registerSocket(e.path());
      scanned_.insert(e.path().string());
    }
    watchLoop();
  });
  return true;
}

void FakeDraKubelet::stop() {
  stopHealth();
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
  }
  if (watcher_.joinable()) watcher_.join();
  for (int* fd : {&inotify_fd_, &stop_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void FakeDraKubelet::watchLoop() {
  const fs::path dir = kubelet_dir_ / "plugins_registry";
  while (true) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    alignas(inotify_event) char buf[4096];
    ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    for (ssize_t off = 0; off < n;) {
      auto* ev = reinterpret_cast<inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if (ev->len == 0) continue;
      const fs::path p = dir / ev->name;
      // The plugin may still be between bind() and listen(): kubelet retries GetInfo too.
      // A socket created between the watch and the scan is reported by both: once is enough.
      if (scanned_.erase(p.string())) continue;
      std::error_code ec;
      if (fs::is_socket(p, ec)) registerSocket(p);
    }
  }
}

void FakeDraKubelet::registerSocket(const fs::path& socket) {
  auto stub = reg::Registration::NewStub(dial(socket.string()));
  reg::PluginInfo info;
  grpc::Status st;
  // Kubelet gives GetInfo a second; a socket that just appeared may not be listening yet.
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto ctx = callContext(1s);
    ctx->set_wait_for_ready(true);
    st = stub->GetInfo(ctx.get(), reg::InfoRequest{}, &info);
    if (st.ok()) break;
  }
  if (!st.ok()) return;
  std::string error;
  const auto& v = info.supported_versions();
  if (info.type() != "DRAPlugin") {
    error = "no handler registered for plugin type: " + info.type();
  } else if (std::find(v.begin(), v.end(), "v1.DRAPlugin") == v.end()) {
    error = "none of the versions supported by the plugin are supported by kubelet";
  } else if (info.endpoint().empty() || info.name().empty()) {
    error = "plugin name or endpoint is empty";
  }
  {
    // As kubelet: the plugin is registered (or the refusal counted) before the plugin is told.
    std::lock_guard lk(mu_);
    if (error.empty()) error = refusal_;
    if (error.empty()) {
      ++registrations_;
      endpoint_ = info.endpoint();
      plugin_name_ = info.name();
      versions_.assign(v.begin(), v.end());
    } else {
      ++refusals_;
    }
    cv_.notify_all();
  }
  reg::RegistrationStatus status;
  status.set_plugin_registered(error.empty());
  status.set_error(error);
  reg::RegistrationStatusResponse resp;
  auto ctx = callContext(2s);
  (void)stub->NotifyRegistrationStatus(ctx.get(), status, &resp);
}

void FakeDraKubelet::setRefusal(std::string reason) {
  std::lock_guard lk(mu_);
  refusal_ = std::move(reason);
}

int FakeDraKubelet::registrations() const {
  std::lock_guard lk(mu_);
  return registrations_;
}

int FakeDraKubelet::refusals() const {
  std::lock_guard lk(mu_);
  return refusals_;
}

bool FakeDraKubelet::waitRegistrations(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return registrations_ >= n; });
}

bool FakeDraKubelet::waitRefusals(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return refusals_ >= n; });
}

std::string FakeDraKubelet::endpoint() const {
  std::lock_guard lk(mu_);
  return endpoint_;
}

std::string FakeDraKubelet::pluginName() const {
  std::lock_guard lk(mu_);
  return plugin_name_;
}

std::vector<std::string> FakeDraKubelet::versions() const {
  std::lock_guard lk(mu_);
  return versions_;
}

std::string FakeDraKubelet::lastError() const {
  std::lock_guard lk(mu_);
  return last_error_;
}

// One DRAPlugin call with the claims; nullopt (and lastError()) when the call itself failed.
template <typename Resp, typename Req, typename Call>
std::optional<Resp> FakeDraKubelet::callDra(const std::vector<Claim>& claims, Call call,
                                            std::chrono::milliseconds timeout) {
  auto stub = dra::DRAPlugin::NewStub(dial(endpoint()));
  Req req;
  for (const Claim& c : claims) {
    dra::Claim* pc = req.add_claims();
    pc->set_namespace_(c.ns);
    pc->set_uid(c.uid);
    pc->set_name(c.name);
  }
  Resp resp;
  auto ctx = callContext(timeout);
  if (auto st = ((*stub).*call)(ctx.get(), req, &resp); !st.ok()) {
    std::lock_guard lk(mu_);
    last_error_ = st.error_message();
    return std::nullopt;
  }
  return resp;
}

std::optional<dra::NodePrepareResourcesResponse> FakeDraKubelet::prepare(
    const std::vector<Claim>& claims, std::chrono::milliseconds timeout) {
  return callDra<dra::NodePrepareResourcesResponse, dra::NodePrepareResourcesRequest>(
      claims, &dra::DRAPlugin::Stub::NodePrepareResources, timeout);
}

std::optional<dra::NodeUnprepareResourcesResponse> FakeDraKubelet::unprepare(
    const std::vector<Claim>& claims) {
  return callDra<dra::NodeUnprepareResourcesResponse, dra::NodeUnprepareResourcesRequest>(
      claims, &dra::DRAPlugin::Stub::NodeUnprepareResources, 10s);
}

void FakeDraKubelet::watchHealth() { watchHealthAt(endpoint()); }

void FakeDraKubelet::watchHealthAt(const std::string& socket) {
  stopHealth();
  health_stop_ = false;
  auto ctx = std::make_shared<grpc::ClientContext>();
  {
    std::lock_guard lk(mu_);
    health_ctx_ = ctx;
    first_health_devices_.reset();
  }
  health_thread_ = std::thread([this, ctx, socket] {
    auto stub = ::v1::DRAResourceHealth::NewStub(dial(socket));
    ::v1::NodeWatchResourcesRequest req;
    auto reader = stub->NodeWatchResources(ctx.get(), req);
    ::v1::NodeWatchResourcesResponse resp;
    while (!health_stop_ && reader->Read(&resp)) {
      std::lock_guard lk(mu_);
      if (!first_health_devices_) first_health_devices_ = resp.devices_size();
      health_.clear();  // each answer is the complete list
      for (const auto& d : resp.devices()) {
        health_[d.device().device_name()] = {d.health(), d.message()};
      }
      ++health_updates_;
      cv_.notify_all();
    }
    (void)reader->Finish();
  });
}

void FakeDraKubelet::stopHealth() {
  health_stop_ = true;
  {
    std::lock_guard lk(mu_);
    if (health_ctx_) health_ctx_->TryCancel();
  }
  if (health_thread_.joinable()) health_thread_.join();
  std::lock_guard lk(mu_);
  health_ctx_.reset();
}

bool FakeDraKubelet::waitHealth(const std::string& name, int health,
                                std::chrono::milliseconds timeout) const {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] {
    auto it = health_.find(name);
    return it != health_.end() && it->second.health == health;
  });
}

std::optional<DeviceHealth> FakeDraKubelet::health(const std::string& name) const {
  std::lock_guard lk(mu_);
  auto it = health_.find(name);
  if (it == health_.end()) return std::nullopt;
  return it->second;
}

std::optional<int> FakeDraKubelet::firstHealthDevices() const {
  std::lock_guard lk(mu_);
  return first_health_devices_;
}

int FakeDraKubelet::healthUpdates() const {
  std::lock_guard lk(mu_);
  return health_updates_;
}

}  // namespace rdmanet::dp::testing
