#include "cni/modes/lossless.h"

#include <fmt/format.h>

#include <functional>

namespace rdmanet::cni {

std::string pfcSet(uint8_t mask) {
  std::vector<int> on;
  for (int p = 0; p < 8; ++p) {
    if ((mask >> p) & 1) on.push_back(p);
  }
  return fmt::format("{{{}}}", fmt::join(on, ","));
}

LosslessFinding evaluateLossless(const std::string& port, int priority, bool has_vlan,
                                 const Result<DcbState>& dcb) {
  LosslessFinding f;
  if (!dcb.ok() || !dcb->supported) {
    f.problem = fmt::format(
        "lossless priority {} cannot be verified: port {} does not report DCB{} (PFC-enabled "
        "priorities: unknown)",
        priority, port, dcb.ok() ? "" : " (" + dcb.error().msg + ")");
    return f;
  }
  f.dcb = *dcb;
  const std::string set = pfcSet(dcb->pfc_enabled);
  if (!dcb->pfcOn(priority)) {
    f.problem =
        fmt::format("priority {} is not PFC-enabled on port {} (PFC-enabled priorities: {})",
                    priority, port, set);
    return f;
  }
  if (dcb->trust() == TrustMode::kDscp) {
    f.dscps = dcb->dscpsFor(priority);
    if (f.dscps.empty()) {
      f.problem = fmt::format(
          "port {} trusts DSCP and no DSCP maps to lossless priority {} (PFC-enabled priorities: "
          "{})",
          port, priority, set);
    }
    return f;
  }
  if (!has_vlan) {
    f.problem = fmt::format(
        "port {} trusts PCP but no VLAN is configured to carry lossless priority {} as PCP "
        "(PFC-enabled priorities: {}); set \"vlan\"",
        port, priority, set);
  }
  return f;
}

Result<LosslessFinding> checkLossless(const LosslessConf& conf, const std::string& port,
                                      bool has_vlan,
                                      const std::function<Result<DcbState>()>& read_dcb,
                                      Logger& log) {
  if (conf.check == LosslessCheck::kOff) return LosslessFinding{};
  LosslessFinding f = evaluateLossless(port, conf.priority, has_vlan, read_dcb());
  if (f.problem.empty()) return f;
  if (conf.check == LosslessCheck::kEnforce) {
    return makeError(ErrorCode::kInvalidConfig, f.problem,
                     "lossless.check is \"enforce\"; fix the port's DCB/PFC settings or use "
                     "\"warn\"");
  }
  log.warn("lossless: {}", f.problem);
  return f;
}

std::string evaluatePodMtu(const std::string& port, const std::string& role,
                           std::optional<uint32_t> pod_mtu, const Result<uint32_t>& port_mtu) {
  if (!pod_mtu || !port_mtu.ok() || *pod_mtu <= *port_mtu) return {};
  return fmt::format(
      "pod MTU {} is above the MTU {} of {} {}: the port would drop the pod's larger frames "
      "(RoCE has no path-MTU discovery); lower \"mtu\" or raise {}'s MTU",
      *pod_mtu, *port_mtu, role, port, port);
}

Status checkPodMtu(const LosslessConf& conf, const std::string& port, const std::string& role,
                   std::optional<uint32_t> pod_mtu,
                   const std::function<Result<uint32_t>()>& read_port_mtu, Logger& log) {
  if (conf.check == LosslessCheck::kOff || !pod_mtu) return okStatus();
  const std::string problem = evaluatePodMtu(port, role, pod_mtu, read_port_mtu());
  if (problem.empty()) return okStatus();
  if (conf.check == LosslessCheck::kEnforce) {
    return makeError(ErrorCode::kInvalidConfig, problem,
                     "lossless.check is \"enforce\"; fix the MTUs or use \"warn\"");
  }
  log.warn("lossless: {}", problem);
  return okStatus();
}

}  // namespace rdmanet::cni
