#pragma once
// What the daemon's HTTP endpoint answers, as a pure function of its inputs (the server in
// http_server.h only carries bytes):
//   /metrics  the daemon's series, the front's own (`front_metrics`), the last doctor run's and
//             the pods' (read now, podnet/pod_metrics.h) (Prometheus text 0.0.4);
//   /healthz  200 while the event loop turns: its heartbeat is younger than kLoopStallLimit;
//             503 naming how long it has been stalled otherwise (kubelet restarts the pod);
//   /readyz   200 while the front is registered with kubelet (every device-plugin pool, or the
//             DRA driver), 503 otherwise; either way followed by the front's note when it has
//             one (the DRA checkpoint's recovery), so a probe's output says what was recovered.

#include <chrono>
#include <string>

#include "common/base/clock.h"
#include "deviceplugin/daemon/doctor_runner.h"
#include "deviceplugin/daemon/http_server.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/podnet/pod_metrics.h"

namespace rdmanet::dp {

// The loop stamps its heartbeat at least once a second; five missed beats mean it is stuck (a
// blocked read, a deadlock), well within the 10 s a probe must notice it in.
inline constexpr std::chrono::seconds kLoopStallLimit{5};

struct ProbeInputs {
  const Metrics& metrics;
  const DoctorRunner* doctor = nullptr;  // null: no periodic doctor
  podnet::PodMetrics* pods = nullptr;    // null: no pod series
  Clock::duration heartbeat_age{};       // now minus the loop's last heartbeat
  std::string front_metrics{};           // e.g. the DRA front's ResourceSlice series
  bool ready = false;                    // the front is registered (Daemon::ready)
  std::string ready_note{};              // DraFront::recoveryNote(); "" for none
};

HttpResponse probeResponse(const std::string& path, const ProbeInputs& in);

}  // namespace rdmanet::dp
