#pragma once
// The lossless-priority check: does the port's DCB state protect the priority the pod's frames
// will carry? (issue 4, "Check it").

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cni/conf/logger.h"
#include "cni/conf/netconf.h"
#include "common/base/result.h"
#include "common/net/dcb.h"

namespace rdmanet::cni {

// What the check found; `problem` is empty when the port protects the priority.
struct LosslessFinding {
  std::string problem;
  std::optional<DcbState> dcb;  // the state read, when the port could report it
  std::vector<uint8_t> dscps;   // DSCP values mapping to the priority (DSCP-trusting port)
};

// Pure rule evaluation over a DCB read (`dcb` an error when the port cannot report DCB).
// Rules: priority not PFC-enabled; DSCP trust with no DSCP mapping to it; PCP trust without a
// VLAN to carry the PCP; no DCB at all. The message names port, priority and the PFC set.
LosslessFinding evaluateLossless(const std::string& port, int priority, bool has_vlan,
                                 const Result<DcbState>& dcb);

// Applies the configured policy: enforce -> error 7 with the finding; warn -> log and Ok;
// off -> Ok without reading anything. `read_dcb` is called at most once.
Result<LosslessFinding> checkLossless(const LosslessConf& conf, const std::string& port,
                                      bool has_vlan,
                                      const std::function<Result<DcbState>()>& read_dcb,
                                      Logger& log);

// The MTU half of a lossless path: a pod MTU above its port's MTU (the PF in sriov mode, the
// master in macvlan, the device in host-device) makes the port drop the pod's large frames,
// and RoCE has no path-MTU discovery to recover. Empty when fine or when there is nothing to
// compare (no pod MTU, or the port's MTU unreadable); else a message naming both MTUs.
std::string evaluatePodMtu(const std::string& port, const std::string& role,
                           std::optional<uint32_t> pod_mtu, const Result<uint32_t>& port_mtu);

// Applies the policy like checkLossless: enforce -> error 7; warn -> log; off -> nothing read.
// `read_port_mtu` is called only when `pod_mtu` is set and the check is not off (one netlink
// request on the ADD path, none for a netconf without "mtu").
Status checkPodMtu(const LosslessConf& conf, const std::string& port, const std::string& role,
                   std::optional<uint32_t> pod_mtu,
                   const std::function<Result<uint32_t>()>& read_port_mtu, Logger& log);

// "{3,4}" for a PFC-enabled bit mask; "{}" when none.
std::string pfcSet(uint8_t mask);

}  // namespace rdmanet::cni
