#pragma once
// DevicePluginFront: the kubelet device-plugin API (v1beta1) over the core's pools. One endpoint
// (a unix socket in <kubelet-dir>/device-plugins) per pool, registered with kubelet.
//
// - apply(): a pool whose config is unchanged keeps its socket and ListAndWatch streams and only
//   gets the new device list; a changed pool restarts its endpoint; a removed one stops.
// - Kubelet restarts (the socket dir watched by front/kubelet_dir_watcher.h): a deleted plugin
//   socket is re-served and re-registered at once; a new kubelet.sock triggers re-registration of
//   every pool not yet registered with that kubelet.sock; the directory vanishing is waited out
//   (re-watched every 500 ms), and every pool re-served once it is back. One restart fires both
//   triggers: a pool registers once per endpoint and kubelet.sock generation (kubelet keeps one
//   client per resource and refuses a second Register while the first one's client is connected).
// - Registration runs on a worker thread (a hung kubelet never stalls the loop); failures retry
//   with backoff: 50 ms doubling to 5 s while kubelet is not there, from 1 s when it refuses.
// All timing reads the injected clock, so tests drive the backoff without sleeping.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "deviceplugin/front/front.h"
#include "deviceplugin/front/kubelet_dir_watcher.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/pools/resource_pool.h"
#include "deviceplugin/v1beta1/endpoint.h"
#include "deviceplugin/v1beta1/registration_worker.h"

namespace rdmanet::dp {

struct DevicePluginFrontOptions {
  std::filesystem::path kubelet_dir = "/var/lib/kubelet";
  ResourcePoolOptions pool{};
};

struct DevicePluginFrontDeps {
  const Clock* clock = nullptr;
  EndpointFactory* endpoints = nullptr;
  KubeletRegistrar* registrar = nullptr;
  Metrics* metrics = nullptr;  // may be null
};

class DevicePluginFront final : public Front {
 public:
  DevicePluginFront(DevicePluginFrontOptions opts, DevicePluginFrontDeps deps);
  ~DevicePluginFront() override;

  std::string_view name() const override { return "deviceplugin"; }
  Status start() override;
  void apply(const PluginConfig& config, const std::vector<Pool>& pools) override;
  std::vector<int> fds() const override;
  void onReadable(int fd) override;
  std::optional<Clock::time_point> nextDeadline() const override;
  void runTimers(Clock::time_point now) override;
  bool ready() const override;
  void stop() override;

  std::filesystem::path socketDir() const { return opts_.kubelet_dir / "device-plugins"; }
  // The live pool of a resource ("rdma/vf"), null when there is none (tests, benchmarks).
  std::shared_ptr<ResourcePool> pool(const std::string& resource) const;

 private:
  using TimePoint = Clock::time_point;
  struct PoolRuntime {
    std::shared_ptr<ResourcePool> pool{};
    std::unique_ptr<Endpoint> endpoint{};
    std::string socket_name{};
    uint64_t generation = 0;  // bumped when the endpoint changes
    bool registered = false;
    // kubeletSocketId() of the kubelet that accepted this endpoint generation's registration (0:
    // none). Registering again while it is the live kubelet.sock would be a duplicate.
    uint64_t registered_with = 0;
    bool in_flight = false;
    std::optional<TimePoint> register_at{};
    std::chrono::milliseconds backoff{0};
    std::string last_error{};
  };

  void onSocketDirEvents(const std::vector<KubeletDirWatcher::Event>& evs);
  void onRegistrations();
  void startPool(Pool pool);
  void stopPool(const std::string& name, bool remove_artifacts);
  void restartEndpoint(PoolRuntime& rt, const std::string& name);
  void scheduleRegister(PoolRuntime& rt, TimePoint when);
  void kubeletAppeared();
  void kubeletVanished();
  uint64_t liveKubelet() const;
  void markRegistered(PoolRuntime& rt, const std::string& name);

  const DevicePluginFrontOptions opts_;
  const DevicePluginFrontDeps deps_;
  KubeletDirWatcher socket_dir_;
  std::unique_ptr<RegistrationWorker> worker_;
  std::map<std::string, PoolRuntime> pools_;
  std::optional<TimePoint> reserve_at_;  // endpoints that could not be served are tried again
};

}  // namespace rdmanet::dp
