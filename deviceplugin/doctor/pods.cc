#include "deviceplugin/doctor/pods.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/json/json_dump.h"
#include "deviceplugin/podnet/counter_names.h"

namespace rdmanet::doctor {
namespace {

using podnet::DeviceReading;
using podnet::PodSnapshot;
using podnet::PortReading;

constexpr const char* kPathLossRemedy =
    "packets are lost where no pause is seen: check PFC on the priority end to end (switch "
    "ports, trust mode, DSCP/PCP mapping), then cables, optics and switch drop counters";
constexpr const char* kCongestionLossRemedy =
    "the port pauses and packets are still lost: PFC headroom or switch buffers are too small "
    "for this load; check the switch's drop counters on the priority";
constexpr const char* kNoPfcRemedy =
    "the port reports no PFC counters, so loss cannot be told from congestion: check the "
    "switch's counters for the priority";
constexpr const char* kRnrRemedy =
    "receiver-not-ready NAKs: the application posts receives too slowly (or too few); not a "
    "network problem";
constexpr const char* kFallbackRemedy =
    "the pod holds an RDMA device but its traffic goes through the kernel's TCP/UDP stack: "
    "check NCCL_IB_DISABLE (unset or 0), NCCL_NET and NCCL_IB_HCA (must name the pod's RDMA "
    "device, as the daemon's NCCL hints do), UCX_TLS (needs rc, ud or dc, not tcp alone), and "
    "that /dev/infiniband/uverbs* is in the pod (`ls /dev/infiniband`, `ibv_devices` inside it: "
    "an image or a security context without them falls back silently)";
constexpr const char* kCarrierRemedy =
    "the port lost carrier: check cable, optics and the switch port's logs (link flaps stall "
    "every QP on the port)";

// Each common metric's total over the device's ports and raw counters, in the metric's unit.
std::map<std::string_view, uint64_t> totals(const DeviceReading& r) {
  std::map<std::string_view, uint64_t> t;
  for (const auto& [port, counters] : r.ports) {
    for (const auto& [raw, v] : counters) {
      if (auto m = podnet::metricFor(raw)) t[m->name] += v * m->scale;
    }
  }
  return t;
}

uint64_t grown(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

// The RDMA traffic metrics: a driver counts bytes (mlx5's PMA counters) or packets only (rxe).
constexpr std::string_view kRdmaTraffic[] = {"rx_bytes", "tx_bytes", "rx_packets", "tx_packets"};

// Bytes the pod's interface moved (rx + tx) between the readings: its own netdev counters (read
// in its netns: every mode, but only with CAP_SYS_ADMIN, which the chart's daemon has only with
// devicePlugin.podNetns.enabled), else its VF's as the PF counts them (sriov on mlx5 or ice;
// unprivileged). The VF's count its RDMA
// traffic too, which is no matter here: a fallback is judged only where RDMA stood still.
// nullopt when neither reading pair has them.
std::optional<uint64_t> interfaceBytes(const DeviceReading& b, const DeviceReading& a) {
  if (b.netdev && a.netdev) {
    return grown(b.netdev->rx_bytes, a.netdev->rx_bytes) +
           grown(b.netdev->tx_bytes, a.netdev->tx_bytes);
  }
  if (b.vf && a.vf)
    return grown(b.vf->rx_bytes, a.vf->rx_bytes) + grown(b.vf->tx_bytes, a.vf->tx_bytes);
  return std::nullopt;
}

const PortReading* portOf(const PodSnapshot& s, const std::string& netdev) {
  for (const auto& p : s.ports) {
    if (p.netdev == netdev) return &p;
  }
  return nullptr;
}

// Pause frames at `prio`, both directions; nullopt when the port has no PFC counters.
std::optional<uint64_t> pauseFrames(const PortReading* p, int prio) {
  if (p == nullptr || p->pfc.empty()) return std::nullopt;
  uint64_t n = 0;
  for (const auto& c : p->pfc) {
    if (c.priority == prio) n += c.frames;
  }
  return n;
}

std::string_view spoken(std::string_view metric) {
  if (metric == "out_of_sequence") return "out-of-sequence";
  if (metric == "sequence_errors") return "sequence errors";
  if (metric == "retransmits") return "retransmits";
  return metric;
}

PodVerdict judgeOne(const DeviceReading& b, const DeviceReading& a, const PodSnapshot& before,
                    const PodSnapshot& after, double secs) {
  const auto& att = a.dev.att;
  PodVerdict v{.pod = att.podRef(),
               .interface = att.ifname,
               .rdma_device = a.dev.rdma_device,
               .mode = att.mode,
               .priority = att.priority};
  const std::string who = fmt::format("pod {}", v.pod);
  const std::string shared =
      att.mode == "macvlan" ? " (counters of the shared port, not this pod's alone)" : "";
  const PortReading* pb = portOf(before, a.dev.port_netdev);
  const PortReading* pa = portOf(after, a.dev.port_netdev);
  const uint64_t flaps = pb && pa && pb->carrier_down && pa->carrier_down
                             ? grown(*pb->carrier_down, *pa->carrier_down)
                             : 0;
  if (a.ports.empty()) {
    v.verdict = Verdict::kUnknown;
    v.summary = fmt::format("{}: no RDMA counters readable for {}", who,
                            a.dev.rdma_device.empty() ? att.ifname : a.dev.rdma_device);
    v.remedy = "the attachment has no RDMA device, or it could not be read";
  }
  const auto tb = totals(b), ta = totals(a);
  auto rate = [&](std::string_view m) {
    auto ib = tb.find(m), ia = ta.find(m);
    if (ia == ta.end()) return 0.0;
    return static_cast<double>(grown(ib == tb.end() ? 0 : ib->second, ia->second)) / secs;
  };
  for (std::string_view m : podnet::kCommonMetrics) {
    if (double r = rate(m); r > 0) v.rates.push_back({std::string(m), humanRate(r) + "/s"});
  }
  std::string_view worst_loss = "out_of_sequence";
  for (std::string_view m : {"out_of_sequence", "sequence_errors", "retransmits"}) {
    const double r = rate(m);
    v.loss_per_s += r;
    if (r > rate(worst_loss)) worst_loss = m;
  }
  v.cnp_per_s = rate("cnp_sent") + rate("cnp_handled");
  v.rdma_bytes_per_s = rate("rx_bytes") + rate("tx_bytes");
  const auto if_bytes = interfaceBytes(b, a);
  if (if_bytes) {
    v.netdev_bytes_per_s = static_cast<double>(*if_bytes) / secs;
    if (*if_bytes > 0) v.rates.push_back({"netdev_bytes", humanRate(v.netdev_bytes_per_s) + "B/s"});
  }
  // A fallback needs RDMA traffic counters that could have moved and did not.
  bool rdma_counted = false;
  double rdma_traffic = 0;
  for (std::string_view m : kRdmaTraffic) {
    rdma_counted = rdma_counted || ta.contains(m);
    rdma_traffic += rate(m);
  }
  const bool fell_back =
      rdma_counted && rdma_traffic == 0 && v.netdev_bytes_per_s >= kTcpFallbackBytesPerS;
  const auto pause_b = pauseFrames(pb, att.priority), pause_a = pauseFrames(pa, att.priority);
  if (pause_b && pause_a) v.pause_per_s = static_cast<double>(grown(*pause_b, *pause_a)) / secs;
  if (v.verdict == Verdict::kUnknown) return v;

  const std::string lost = fmt::format("{} {}/s on {}", humanRate(rate(worst_loss)),
                                       spoken(worst_loss), a.dev.rdma_device);
  if (flaps > 0) {
    v.verdict = Verdict::kFail;
    v.summary =
        fmt::format("{}: its port {} lost carrier {} time(s)", who, a.dev.port_netdev, flaps);
    v.remedy = kCarrierRemedy;
  } else if (fell_back) {
    v.verdict = Verdict::kFail;
    v.summary = fmt::format(
        "{}: moved {} over {} and 0 B over RDMA ({}) in the last {:.0f} s: the workload fell back "
        "to TCP{}",
        who, humanBytes(static_cast<double>(*if_bytes)), att.ifname, a.dev.rdma_device, secs,
        shared);
    v.remedy = kFallbackRemedy;
  } else if (v.loss_per_s > 0 && !pause_a) {
    v.verdict = Verdict::kWarn;
    v.summary = fmt::format("{}: {} and its port reports no PFC counters{}", who, lost, shared);
    v.remedy = kNoPfcRemedy;
  } else if (v.loss_per_s > 0 && v.pause_per_s == 0) {
    v.verdict = Verdict::kFail;
    v.summary = fmt::format(
        "{}: {} while its port shows 0 pause frames: suspect loss on the path, not "
        "congestion{}",
        who, lost, shared);
    v.remedy = kPathLossRemedy;
  } else if (v.loss_per_s > 0) {
    v.verdict = Verdict::kWarn;
    v.summary = fmt::format(
        "{}: {} while its port pauses {} frames/s on priority {}: congestion "
        "with loss{}",
        who, lost, humanRate(v.pause_per_s), att.priority, shared);
    v.remedy = kCongestionLossRemedy;
  } else if (rate("rnr_naks") > 0) {
    v.verdict = Verdict::kWarn;
    v.summary = fmt::format("{}: {} RNR NAKs/s on {}: the receiver is not ready", who,
                            humanRate(rate("rnr_naks")), a.dev.rdma_device);
    v.remedy = kRnrRemedy;
  } else if (v.cnp_per_s > 0) {
    v.summary = fmt::format("{}: no loss; {} CNPs/s on {}: congestion control (DCQCN) at work{}",
                            who, humanRate(v.cnp_per_s), a.dev.rdma_device, shared);
  } else {
    v.summary = fmt::format("{}: no loss on {}", who, a.dev.rdma_device);
  }
  return v;
}

}  // namespace

std::string humanRate(double per_s) {
  if (per_s >= 1e9) return fmt::format("{:.1f} G", per_s / 1e9);
  if (per_s >= 1e6) return fmt::format("{:.1f} M", per_s / 1e6);
  if (per_s >= 1e3) return fmt::format("{:.1f} k", per_s / 1e3);
  if (per_s >= 10 || per_s == 0) return fmt::format("{:.0f}", per_s);
  return fmt::format("{:.1f}", per_s);
}

std::string humanBytes(double bytes) {
  std::string s = humanRate(bytes);
  return s + (s.back() >= '0' && s.back() <= '9' ? " B" : "B");
}

std::vector<PodVerdict> judgePods(const PodSnapshot& before, const PodSnapshot& after,
                                  double seconds) {
  std::map<std::pair<std::string, std::string>, const DeviceReading*> earlier;
  for (const auto& r : before.devices) earlier[{r.dev.att.container_id, r.dev.att.ifname}] = &r;
  std::vector<PodVerdict> out;
  for (const auto& r : after.devices) {
    auto it = earlier.find({r.dev.att.container_id, r.dev.att.ifname});
    if (it == earlier.end()) continue;  // attached during the interval: no rate yet
    out.push_back(judgeOne(*it->second, r, before, after, seconds));
  }
  std::stable_sort(out.begin(), out.end(), [](const PodVerdict& a, const PodVerdict& b) {
    return std::make_tuple(severity(a.verdict), a.loss_per_s, a.cnp_per_s) >
           std::make_tuple(severity(b.verdict), b.loss_per_s, b.cnp_per_s);
  });
  return out;
}

void renderPodsTable(const std::vector<PodVerdict>& pods, double seconds, std::ostream& out) {
  constexpr std::string_view kRow =
      "{:<8} {:<32} {:<10} {:<12} {:<11} {:>4} {:>12} {:>10} {:>10} {:>10} {:>10}\n";
  out << fmt::format(kRow, "VERDICT", "POD", "INTERFACE", "RDMA", "MODE", "PRIO", "LOSS/s", "CNP/s",
                     "PAUSE/s", "IF B/s", "RDMA B/s");
  for (const auto& p : pods) {
    out << fmt::format(kRow, verdictName(p.verdict), p.pod, p.interface,
                       p.rdma_device.empty() ? "-" : p.rdma_device, p.mode, p.priority,
                       humanRate(p.loss_per_s), humanRate(p.cnp_per_s), humanRate(p.pause_per_s),
                       humanRate(p.netdev_bytes_per_s), humanRate(p.rdma_bytes_per_s));
  }
  if (pods.empty()) out << "no pod attachments on this node\n";
  out << fmt::format("\nover {:.0f}s, worst first:\n", seconds);
  for (const auto& p : pods) {
    out << fmt::format("{:<8} {}\n", verdictName(p.verdict), p.summary);
    if (p.verdict != Verdict::kPass && !p.remedy.empty()) out << "         -> " << p.remedy << "\n";
  }
}

void renderPodsJson(const std::vector<PodVerdict>& pods, double seconds, std::ostream& out) {
  using json = nlohmann::ordered_json;
  json list = json::array();
  for (const auto& p : pods) {
    json rates = json::object();
    for (const auto& e : p.rates) rates[e.key] = e.value;
    list.push_back({{"pod", p.pod},
                    {"interface", p.interface},
                    {"rdma_device", p.rdma_device},
                    {"mode", p.mode},
                    {"priority", p.priority},
                    {"verdict", verdictName(p.verdict)},
                    {"summary", p.summary},
                    {"remedy", p.remedy},
                    {"loss_per_s", p.loss_per_s},
                    {"cnp_per_s", p.cnp_per_s},
                    {"pause_per_s", p.pause_per_s},
                    {"netdev_bytes_per_s", p.netdev_bytes_per_s},
                    {"rdma_bytes_per_s", p.rdma_bytes_per_s},
                    {"rates", std::move(rates)}});
  }
  out << dumpJson(json{{"interval_s", seconds}, {"pods", std::move(list)}}, 2) << "\n";
}

}  // namespace rdmanet::doctor
