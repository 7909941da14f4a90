#pragma once
// ReportedPreparer: ClaimPreparer as the DRA server calls it, with what each call tells besides
// kubelet's answer:
// - /metrics: every claim's prepare and unprepare, its outcome and how long it took on the
//   injected clock (Metrics::observeClaimOperation: rdmanet_dra_claim_operations_total and
//   rdmanet_dra_claim_operation_duration_seconds);
// - a Warning Event (reason kPrepareFailedReason) when a prepare fails, naming the claim and the
//   error: on the pod when the claim names one (onePodOf: its owner, or its only reservation),
//   on the claim otherwise (a claim that could not be read, or one shared by several pods, of
//   which the claim does not say which this node prepares for). Kubelet also puts an Event on
//   the pod (FailedPrepareDynamicResources) with its whole call's error; this one comes from the
//   driver, names the node and reaches the claim too when no pod is known. The sink queues it:
//   a failed prepare answers kubelet as fast without it (event_sink.h).
// Thread-safe, as ClaimPreparer.

#include "common/base/clock.h"
#include "deviceplugin/dra/event_sink.h"
#include "deviceplugin/dra/kubelet/prepare.h"
#include "deviceplugin/metrics.h"

namespace rdmanet::dp {

inline constexpr const char* kPrepareFailedReason = "FailedPrepareResourceClaim";

struct PrepareReportDeps {
  const Clock* clock = nullptr;  // required
  Metrics* metrics = nullptr;    // null: no series
  EventSink* events = nullptr;   // null: no Events
};

class ReportedPreparer {
 public:
  // `preparer` and the deps must outlive this. `driver` names the driver in Event messages.
  ReportedPreparer(ClaimPreparer& preparer, std::string driver, PrepareReportDeps deps)
      : preparer_(preparer), driver_(std::move(driver)), deps_(deps) {}

  Result<PreparedClaim> prepare(const ClaimRef& ref, const Deadline& deadline = {});
  Status unprepare(const ClaimRef& ref);

 private:
  ClaimPreparer& preparer_;
  const std::string driver_;
  const PrepareReportDeps deps_;
};

// The Event a failed prepare of `ref` makes (ReportedPreparer sends it; here for its tests):
// about `pod` when known, else the claim.
struct PrepareFailedEvent {
  EventObject about;
  std::string message;
};
PrepareFailedEvent prepareFailedEvent(const std::string& driver, const ClaimRef& ref,
                                      const std::optional<ClaimPod>& pod, const Error& error);

}  // namespace rdmanet::dp
