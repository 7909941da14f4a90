#include "deviceplugin/daemon/probes.h"

#include <fmt/format.h>

namespace rdmanet::dp {

HttpResponse probeResponse(const std::string& path, const ProbeInputs& in) {
  if (path == "/metrics") {
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                        in.metrics.render() + in.front_metrics +
                            (in.doctor ? in.doctor->render() : std::string()) +
                            (in.pods ? in.pods->render() : std::string())};
  }
  if (path == "/healthz") {
    if (in.heartbeat_age < kLoopStallLimit) return HttpResponse{200, "text/plain", "ok\n"};
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(in.heartbeat_age).count();
    return HttpResponse{503, "text/plain",
                        fmt::format("event loop stalled: no turn for {} ms\n", ms)};
  }
  if (path == "/readyz") {
    const std::string note = in.ready_note.empty() ? "" : in.ready_note + "\n";
    return in.ready ? HttpResponse{200, "text/plain", "ready\n" + note}
                    : HttpResponse{503, "text/plain", "not registered with kubelet\n" + note};
  }
  return HttpResponse{404, "text/plain", "not found\n"};
}

}  // namespace rdmanet::dp
