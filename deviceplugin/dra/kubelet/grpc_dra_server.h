#pragma once
// The gRPC side of the DRA front, the only DRA files that include gRPC headers:
// - DraServer: kubelet's DRAPlugin (k8s.io.kubelet.pkg.apis.dra.v1) and DRAResourceHealth
//   (dra-health v1) services on <kubelet-dir>/plugins/<driver>/dra.sock;
// - RegistrationServer: the plugin watcher's pluginregistration.Registration service on
//   <kubelet-dir>/plugins_registry/<driver>-reg.sock.
// Both translate only: prepare decisions live in ClaimPreparer (through ReportedPreparer), devices
// and health in DeviceState.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "deviceplugin/dra/kubelet/prepare_report.h"
#include "deviceplugin/dra/node_devices.h"
#include "deviceplugin/front/socket_server.h"

namespace rdmanet::dp {

inline constexpr std::string_view kDraPluginType = "DRAPlugin";
inline constexpr std::string_view kDraPluginVersion = "v1.DRAPlugin";

struct DraServerOptions {
  std::string node{};  // the DRA pool name in health reports
  // Health streams resend the full list at least this often (on the clock serveDra gets):
  // kubelet marks a device Unknown when its last report is older than its health timeout (30 s
  // by default).
  std::chrono::milliseconds health_resend{std::chrono::seconds(10)};
};

// Serves on `socket` (a stale file there is replaced). Error 5 when it cannot bind. `preparer`
// (prepare and unprepare, measured and reported), `state` and `clock` (which times the health
// streams' resends) must outlive the server.
Result<std::unique_ptr<SocketServer>> serveDra(const std::filesystem::path& socket,
                                               const DraServerOptions& opts,
                                               ReportedPreparer& preparer, const DeviceState& state,
                                               const Clock& clock);

struct PluginInfo {
  std::string name{};      // the driver name
  std::string endpoint{};  // the absolute path of dra.sock
};
// Called on a gRPC thread for every NotifyRegistrationStatus.
using RegistrationCallback = std::function<void(bool registered, const std::string& error)>;

Result<std::unique_ptr<SocketServer>> serveRegistration(const std::filesystem::path& socket,
                                                        PluginInfo info,
                                                        RegistrationCallback on_status);

}  // namespace rdmanet::dp
