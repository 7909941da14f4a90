#pragma once
// The lossless-priority check: does the port's DCB state protect the priority the pod's frames
// will carry? (issue 4, "Check it").

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cni/logger.h"
#include "cni/netconf.h"
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

// "{3,4}" for a PFC-enabled bit mask; "{}" when none.
std::string pfcSet(uint8_t mask);

}  // namespace rdmanet::cni
