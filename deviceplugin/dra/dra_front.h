#pragma once
// DraFront: kubelet's Dynamic Resource Allocation API (dra v1) over the core's pools, the second
// Front (front/front.h) beside the device-plugin one.
//
// - Registration: pluginregistration.Registration on
// <kubelet-dir>/plugins_registry/<driver>-reg.sock
//   (GetInfo: type DRAPlugin, the driver name, endpoint <kubelet-dir>/plugins/<driver>/dra.sock,
//   versions ["v1.DRAPlugin"]). ready() once kubelet's NotifyRegistrationStatus said registered.
//   A refusal is logged and the socket served again after 1 s, so the plugin watcher retries.
// - Kubelet restarts: the registry and plugin directories are watched
//   (front/kubelet_dir_watcher.h). Our socket deleted is served again at once; a directory that
//   vanished is checked for every 500 ms and, once back, the sockets are served again in it
//   (kubelet's plugin watcher registers new sockets).
// - DRAPlugin and DRAResourceHealth on dra.sock (grpc_dra_server.h): prepare through
//   ClaimPreparer, health streams from DeviceState.
// - apply(): the pools become DRA devices (dra_device.h) in a new DeviceState version when
//   anything about them changed; open health streams see it at once; the publisher (the
//   ResourceSlice side), when there is one, gets the same inventory.
// - Claim work that reads the API server outside a kubelet call runs on a Worker of its own
//   (claim_sync_): rebuilding a corrupt prepared-claims checkpoint that had no good backup
//   (kubelet/checkpoint_recovery.h), once the devices are known, retried every 5 s on the clock
//   until the list succeeds (recoveryNote() says what happened, for /readyz); and reading the
//   shareable prepared claims' reservations again every 3 s on the clock, so a shared claim's
//   later pods get their device records (ClaimPreparer::refreshReservations).
// - With a ClaimStatusWriter and a pod-devices dir: the CNI's network reports go into the
//   prepared claims' status.devices, a pass every second on the clock on a Worker of their own
//   (network_sync_), so that a stalled status write never delays the claim work above.
// Timers read the injected clock; tests drive them with a FakeClock.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/os/mailbox.h"
#include "common/os/watch.h"
#include "common/os/worker.h"
#include "deviceplugin/dra/claim_network_sync.h"
#include "deviceplugin/dra/claim_reader.h"
#include "deviceplugin/dra/claim_status_writer.h"
#include "deviceplugin/dra/device_publisher.h"
#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/dra/event_sink.h"
#include "deviceplugin/dra/kubelet/grpc_dra_server.h"
#include "deviceplugin/dra/kubelet/prepare.h"
#include "deviceplugin/dra/kubelet/prepare_report.h"
#include "deviceplugin/dra/node_devices.h"
#include "deviceplugin/front/front.h"
#include "deviceplugin/front/kubelet_dir_watcher.h"

namespace rdmanet::dp {

struct DraFrontOptions {
  std::filesystem::path kubelet_dir = "/var/lib/kubelet";
  std::string driver = std::string(dra::kDefaultDriverName);
  std::string node{};  // required: the DRA pool name
  std::filesystem::path cdi_dir = "/var/run/cdi";
  std::filesystem::path pod_devices_dir{};  // PreparerOptions::pod_devices_dir
  // PreparerOptions::device_metadata; the files go under pluginDir()/dra-device-metadata.
  bool device_metadata = true;
  bool allow_multiple_allocations = false;
  std::chrono::milliseconds health_resend{std::chrono::seconds(10)};
};

struct DraFrontDeps {
  const Clock* clock = nullptr;
  ClaimReader* claims = nullptr;
  DevicePublisher* publisher = nullptr;  // may be null
  // Each claim's prepare and unprepare on /metrics, and an Event for a failed prepare
  // (kubelet/prepare_report.h); either may be null.
  Metrics* metrics = nullptr;
  EventSink* events = nullptr;
  // Writes the CNI's network reports into the claims' status (claim_network_sync.h); may be
  // null (then nothing is written), and needs a pod_devices_dir.
  ClaimStatusWriter* claim_status = nullptr;
};

class DraFront final : public Front {
 public:
  DraFront(DraFrontOptions opts, DraFrontDeps deps);
  ~DraFront() override;

  std::string_view name() const override { return "dra"; }
  // Error 7 for a bad driver or node name; 5 when a socket, the inotify watch or the checkpoint
  // cannot be set up.
  Status start() override;
  void apply(const PluginConfig& config, const std::vector<Pool>& pools) override;
  std::vector<int> fds() const override;
  void onReadable(int fd) override;
  std::optional<Clock::time_point> nextDeadline() const override;
  void runTimers(Clock::time_point now) override;
  bool ready() const override { return registered_; }
  void stop() override;

  std::filesystem::path registrySocket() const;
  std::filesystem::path draSocket() const;
  std::filesystem::path checkpointFile() const { return pluginDir() / "checkpoint.json"; }
  std::shared_ptr<const DeviceSnapshot> inventory() const { return state_.current().value; }
  // What was done about a corrupt checkpoint ("" when nothing was needed). Any thread.
  std::string recoveryNote() const { return preparer_.recoveryNote(); }

 private:
  using TimePoint = Clock::time_point;
  struct Notification {
    bool registered = false;
    std::string error{};
  };

  std::filesystem::path registryDir() const { return opts_.kubelet_dir / "plugins_registry"; }
  std::filesystem::path pluginDir() const;
  void onDirEvents(const std::vector<KubeletDirWatcher::Event>& evs);
  void onNotifications();
  void serveRegistration();
  void serveDra();

  const DraFrontOptions opts_;
  const DraFrontDeps deps_;
  DeviceState state_;
  ClaimPreparer preparer_;
  ReportedPreparer reported_;  // preparer_ as the DRA server calls it
  KubeletDirWatcher dirs_;     // registryDir() (kRegistryDir), pluginDir() (kPluginDir)
  // Kubelet's NotifyRegistrationStatus calls, posted from gRPC threads.
  std::unique_ptr<Mailbox<Notification>> notifications_;
  std::unique_ptr<SocketServer> registration_, dra_;
  std::unique_ptr<Worker> claim_sync_;  // from the first apply() on
  std::unique_ptr<ClaimNetworkSync> network_;
  std::unique_ptr<Worker> network_sync_;  // runs network_, from the first apply() on
  bool registered_ = false;
  bool applied_ = false;  // the registration socket is served from the first apply() on
  void republish();
  void startClaimSync();

  std::optional<TimePoint> reserve_at_;
  // After a registration: the next of the publishes that outlast kubelet's start-up wipe of the
  // node's slices (kRepublishAfter), and how many are left.
  std::optional<TimePoint> republish_at_;
  size_t republishes_done_ = 0;
};

}  // namespace rdmanet::dp
