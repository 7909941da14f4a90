#pragma once
// FakeDraKubelet: kubelet's side of DRA, built from the upstream protos, for tests.
//
// - Plugin watcher: like kubelet's pluginwatcher it scans <kubelet-dir>/plugins_registry and then
//   follows it (inotify); for every socket that appears it calls Registration.GetInfo, validates
//   the answer as the DRA registration handler does (type "DRAPlugin", a supported version
//   "v1.DRAPlugin", an endpoint) and answers NotifyRegistrationStatus: registered, or not with
//   the reason (also when the test asked it to refuse).
// - DRAPlugin calls on the registered endpoint: NodePrepareResources, NodeUnprepareResources.
// - DRAResourceHealth: one NodeWatchResources stream, read on its own thread; the latest state
//   of each device is kept for the test to wait on.

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "proto/kubelet/dra-health/v1/api.pb.h"
#include "proto/kubelet/dra/v1/api.pb.h"

namespace grpc {
class ClientContext;
}

namespace rdmanet::dp::testing {

struct Claim {
  std::string ns, uid, name;
};

struct DeviceHealth {
  int health = 0;  // v1::HealthStatus
  std::string message{};
};

class FakeDraKubelet {
 public:
  explicit FakeDraKubelet(std::filesystem::path kubelet_dir);
  ~FakeDraKubelet();

  // Creates plugins_registry if needed and starts watching it.
  bool start();
  void stop();

  // Refuse every registration from now on with this reason ("" accepts again).
  void setRefusal(std::string reason);
  int registrations() const;  // accepted
  int refusals() const;
  // Waits until `n` registrations were accepted (or `refusals` refused), up to `timeout`.
  bool waitRegistrations(int n, std::chrono::milliseconds timeout) const;
  bool waitRefusals(int n, std::chrono::milliseconds timeout) const;
  std::string endpoint() const;    // from the last accepted GetInfo
  std::string pluginName() const;  // likewise
  std::vector<std::string> versions() const;

  // gRPC status errors come back as nullopt (the test prints `lastError()`).
  // `timeout`: the call's gRPC deadline (kubelet's is 45 s).
  std::optional<k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesResponse> prepare(
      const std::vector<Claim>& claims,
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::optional<k8s::io::kubelet::pkg::apis::dra::v1::NodeUnprepareResourcesResponse> unprepare(
      const std::vector<Claim>& claims);
  std::string lastError() const;

  // Opens the health stream (again), on the registered endpoint or on `socket`.
  void watchHealth();
  void watchHealthAt(const std::string& socket);
  // How many devices the current stream's first message listed; nullopt before it came.
  std::optional<int> firstHealthDevices() const;
  void stopHealth();
  // Waits until device `name` last reported `health`.
  bool waitHealth(const std::string& name, int health, std::chrono::milliseconds timeout) const;
  std::optional<DeviceHealth> health(const std::string& name) const;
  int healthUpdates() const;

 private:
  template <typename Resp, typename Req, typename Call>
  std::optional<Resp> callDra(const std::vector<Claim>& claims, Call call,
                              std::chrono::milliseconds timeout);
  void watchLoop();
  void registerSocket(const std::filesystem::path& socket);

  const std::filesystem::path kubelet_dir_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::string refusal_;
  int registrations_ = 0, refusals_ = 0;
  std::string endpoint_, plugin_name_, last_error_;
  std::vector<std::string> versions_;
  std::map<std::string, DeviceHealth> health_;
  int health_updates_ = 0;
  std::optional<int> first_health_devices_;

  std::set<std::string> scanned_;  // found by the start-up scan (watcher thread only)
  int inotify_fd_ = -1;
  int stop_fd_ = -1;
  std::thread watcher_;
  std::atomic<bool> health_stop_{false};
  std::shared_ptr<grpc::ClientContext> health_ctx_;
  std::thread health_thread_;
};

}  // namespace rdmanet::dp::testing
