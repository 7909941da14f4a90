#include "deviceplugin/dra/kubelet/prepare_report.h"

#include <fmt/format.h>

#include "common/kube/names.h"

namespace rdmanet::dp {

namespace {

double secondsSince(Clock::time_point start, const Clock& clock) {
  return std::chrono::duration<double>(clock.now() - start).count();
}

}  // namespace

PrepareFailedEvent prepareFailedEvent(const std::string& driver, const ClaimRef& ref,
                                      const std::optional<ClaimPod>& pod, const Error& error) {
  PrepareFailedEvent e;
  if (pod) {
    e.about = {
        .api_version = "v1", .kind = "Pod", .ns = ref.ns, .name = pod->name, .uid = pod->uid};
  } else {
    e.about = {.api_version = "resource.k8s.io/v1",
               .kind = "ResourceClaim",
               .ns = ref.ns,
               .name = ref.name,
               .uid = ref.uid};
  }
  e.message = fmt::format("{} could not prepare ResourceClaim {}/{}: {}", driver, ref.ns, ref.name,
                          error.msg);
  return e;
}

Result<PreparedClaim> ReportedPreparer::prepare(const ClaimRef& ref, const Deadline& deadline) {
  const auto start = deps_.clock->now();
  std::optional<ClaimPod> pod;
  auto r = preparer_.prepare(ref, deadline, &pod);
  if (deps_.metrics)
    deps_.metrics->observeClaimOperation("prepare", r.ok(), secondsSince(start, *deps_.clock));
  // An Event needs a namespace and a name to be about: a malformed reference has none.
  if (!r.ok() && deps_.events && kube::isDnsLabel(ref.ns) && kube::isDnsSubdomain(ref.name)) {
    const PrepareFailedEvent e = prepareFailedEvent(driver_, ref, pod, r.error());
    deps_.events->warning(e.about, kPrepareFailedReason, e.message);
  }
  return r;
}

Status ReportedPreparer::unprepare(const ClaimRef& ref) {
  const auto start = deps_.clock->now();
  Status st = preparer_.unprepare(ref);
  if (deps_.metrics)
    deps_.metrics->observeClaimOperation("unprepare", st.ok(), secondsSince(start, *deps_.clock));
  return st;
}

}  // namespace rdmanet::dp
