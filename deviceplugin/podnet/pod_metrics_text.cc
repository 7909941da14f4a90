#include "deviceplugin/podnet/pod_metrics_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "deviceplugin/podnet/counter_names.h"

namespace rdmanet::podnet {
namespace {

constexpr std::string_view kDriverCounter = "rdmanet_pod_rdma_driver_counter_total";

struct CounterSample {
  const DeviceReading* r;
  int port;
  const std::string* raw;
  uint64_t value;
};

std::string joinPods(const std::vector<std::string>& pods) {
  std::string s;
  for (const auto& p : pods) {
    if (!s.empty()) s += ',';
    s += p;
  }
  return s;
}

// The labels every per-device pod series starts with (the RDMA counters, the VF's and the pod
// interface's traffic): alike, so that a rule can set one family against another per pod and
// interface.
std::array<PrometheusText::Label, 6> deviceLabels(const DeviceReading& r) {
  const auto& a = r.dev.att;
  return {{{"namespace", a.pod_namespace},
           {"pod", a.pod_name},
           {"interface", a.ifname},
           {"device", a.pci},
           {"rdma_device", r.dev.rdma_device},
           {"mode", a.mode}}};
}

void rdmaCounters(const PodSnapshot& snap, PrometheusText& out) {
  // Bucketed in one pass, so each family's samples are written together (the format wants
  // that) without a pass over every counter per family.
  std::map<std::string_view, std::vector<CounterSample>> families;
  std::map<std::string_view, std::string> names;
  for (std::string_view m : kCommonMetrics) {
    names[m] = fmt::format("rdmanet_pod_rdma_{}_total", m);
    families[m];
  }
  std::vector<CounterSample> other;
  for (const auto& r : snap.devices) {
    for (const auto& [port, counters] : r.ports) {
      for (const auto& [raw, v] : counters) {
        if (auto m = metricFor(raw)) {
          families[m->name].push_back({&r, port, &raw, v * m->scale});
        } else {
          other.push_back({&r, port, &raw, v});
        }
      }
    }
  }
  auto write = [&](std::string_view name, const std::vector<CounterSample>& samples) {
    for (const auto& s : samples) {
      const std::string port = std::to_string(s.port);
      out.sample(name, deviceLabels(*s.r), {{"port", port}, {"counter", *s.raw}}, s.value);
    }
  };
  for (std::string_view m : kCommonMetrics) {
    out.family(names[m], "counter", metricHelp(m));
    write(names[m], families[m]);
  }
  out.family(kDriverCounter, "counter",
             "An RDMA counter of the pod's device with no common name (label counter).");
  write(kDriverCounter, other);
}

// One counter family per field of a traffic reading (the VF's, as its PF counts it, or the pod
// interface's own), labelled as the RDMA counters so that a rule can set one against another per
// pod and interface.
template <typename Traffic>
struct TrafficField {
  std::string_view name, help;
  uint64_t Traffic::*member;
};

template <typename Traffic, size_t N>
void trafficCounters(const PodSnapshot& snap, PrometheusText& out,
                     const std::array<TrafficField<Traffic>, N>& fields,
                     std::optional<Traffic> DeviceReading::*reading) {
  for (const auto& f : fields) {
    out.family(f.name, "counter", f.help);
    for (const auto& r : snap.devices) {
      if (!(r.*reading)) continue;
      out.sample(f.name, deviceLabels(r), {}, (*(r.*reading)).*f.member);
    }
  }
}

void vfCounters(const PodSnapshot& snap, PrometheusText& out) {
  using Field = TrafficField<VfTraffic>;
  static constexpr std::array<Field, 6> kFields = {{
      {"rdmanet_pod_vf_rx_bytes_total", "Bytes the VF received, as its PF counts them.",
       &VfTraffic::rx_bytes},
      {"rdmanet_pod_vf_tx_bytes_total", "Bytes the VF sent, as its PF counts them.",
       &VfTraffic::tx_bytes},
      {"rdmanet_pod_vf_rx_packets_total", "Packets the VF received, as its PF counts them.",
       &VfTraffic::rx_packets},
      {"rdmanet_pod_vf_tx_packets_total", "Packets the VF sent, as its PF counts them.",
       &VfTraffic::tx_packets},
      {"rdmanet_pod_vf_rx_dropped_total", "Received packets the PF dropped for the VF.",
       &VfTraffic::rx_dropped},
      {"rdmanet_pod_vf_tx_dropped_total", "Sent packets the PF dropped for the VF.",
       &VfTraffic::tx_dropped},
  }};
  trafficCounters(snap, out, kFields, &DeviceReading::vf);
}

// The pod interface's own counters, labelled as the RDMA ones so that a rule can set one against
// the other per pod and interface (the chart's RdmanetPodSilentTcpFallback).
void netdevCounters(const PodSnapshot& snap, PrometheusText& out) {
  using Field = TrafficField<NetdevTraffic>;
  static constexpr std::array<Field, 4> kFields = {{
      {"rdmanet_pod_netdev_rx_bytes_total",
       "Bytes the pod's interface received through the kernel's stack (not hardware RDMA).",
       &NetdevTraffic::rx_bytes},
      {"rdmanet_pod_netdev_tx_bytes_total",
       "Bytes the pod's interface sent through the kernel's stack (not hardware RDMA).",
       &NetdevTraffic::tx_bytes},
      {"rdmanet_pod_netdev_rx_packets_total",
       "Packets the pod's interface received through the kernel's stack.",
       &NetdevTraffic::rx_packets},
      {"rdmanet_pod_netdev_tx_packets_total",
       "Packets the pod's interface sent through the kernel's stack.", &NetdevTraffic::tx_packets},
  }};
  trafficCounters(snap, out, kFields, &DeviceReading::netdev);
}

void info(const PodSnapshot& snap, PrometheusText& out) {
  constexpr std::string_view kName = "rdmanet_pod_device_info";
  out.family(kName, "gauge", "One per pod attachment: its device, RDMA device, mode and priority.");
  for (const auto& r : snap.devices) {
    const auto& a = r.dev.att;
    const std::string prio = std::to_string(a.priority);
    out.sample(kName,
               {{"namespace", a.pod_namespace},
                {"pod", a.pod_name},
                {"uid", a.pod_uid},
                {"interface", a.ifname},
                {"device", a.pci},
                {"rdma_device", r.dev.rdma_device},
                {"mode", a.mode},
                {"netdev", a.host_netdev},
                {"priority", prio}},
               1);
  }
}

void ports(const PodSnapshot& snap, PrometheusText& out) {
  constexpr std::string_view kFrames = "rdmanet_port_pfc_pause_frames_total";
  constexpr std::string_view kDuration = "rdmanet_port_pfc_pause_duration_seconds_total";
  constexpr std::string_view kLinkDown = "rdmanet_port_link_down_events_total";
  std::vector<std::string> pods;
  pods.reserve(snap.ports.size());
  for (const auto& p : snap.ports) pods.push_back(joinPods(p.pods));
  // One family per value; `value` gives nullopt where a driver does not count it.
  auto pfcFamily = [&](std::string_view name, std::string_view help, auto value) {
    out.family(name, "counter", help);
    for (size_t i = 0; i < snap.ports.size(); ++i) {
      const auto& p = snap.ports[i];
      for (const auto& c : p.pfc) {
        const auto v = value(c);
        if (!v) continue;
        const std::string prio = std::to_string(c.priority);
        out.sample(name,
                   {{"netdev", p.netdev},
                    {"device", p.pci},
                    {"priority", prio},
                    {"direction", c.direction},
                    {"pods", pods[i]}},
                   *v);
      }
    }
  };
  pfcFamily(kFrames, "PFC pause frames per priority of a port pods use (rx: received, tx: sent).",
            [](const PfcCounter& c) { return std::optional<uint64_t>(c.frames); });
  pfcFamily(kDuration, "Time a port was paused (rx) or pausing its peer (tx).",
            [](const PfcCounter& c) -> std::optional<double> {
              if (!c.duration_us) return std::nullopt;
              return static_cast<double>(*c.duration_us) / 1e6;  // the driver counts µs
            });
  out.family(kLinkDown, "counter", "Times a port pods use lost its carrier.");
  for (const auto& p : snap.ports) {
    if (p.carrier_down)
      out.sample(kLinkDown, {{"netdev", p.netdev}, {"device", p.pci}}, *p.carrier_down);
  }
}

}  // namespace

void renderPodMetrics(const PodSnapshot& snap, PrometheusText& out) {
  info(snap, out);
  rdmaCounters(snap, out);
  vfCounters(snap, out);
  netdevCounters(snap, out);
  ports(snap, out);
}

}  // namespace rdmanet::podnet
