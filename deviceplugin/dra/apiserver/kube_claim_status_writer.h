#pragma once
// KubeClaimStatusWriter: ClaimStatusWriter over the Kubernetes REST client.
//
// Read, merge, write back: GET the claim, bring our entries of status.devices in line
// (device_status.h), and PUT the whole object to its status subresource
// (/apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name>/status) at the
// resourceVersion read. A 409 (someone else wrote the claim meanwhile: the scheduler, kubelet,
// another driver) starts over from the GET, up to kMaxConflicts times. The client has no PATCH
// verb; a PUT at the read resourceVersion is as safe, and keeps other drivers' entries exactly
// as the server holds them.
//
// RBAC (the chart's rbac.yaml): update on resourceclaims/status, and, since Kubernetes 1.36
// (DRAResourceClaimGranularStatusAuthorization, beta and on by default; kubernetes#138149),
// the verb associated-node:update on the synthetic subresource resourceclaims/driver for our
// driver's name: the API server asks it for every driver whose entries a write changes. The
// daemon's service-account token is bound to its pod, so it carries the node's name, and the
// claim is allocated on that node: the associated-node verb is the one that applies.

#include <functional>

#include "common/kube/client.h"
#include "deviceplugin/dra/claim_status_writer.h"

namespace rdmanet::dp {

class KubeClaimStatusWriter final : public ClaimStatusWriter {
 public:
  static constexpr int kMaxConflicts = 5;
  // RFC 3339 UTC "now", for a condition's lastTransitionTime.
  using WallClock = std::function<std::string()>;
  static std::string systemNow();

  // `client` must outlive the writer, and should be its own: cancel() cancels it.
  KubeClaimStatusWriter(kube::KubeClient& client, std::string driver, WallClock now = systemNow)
      : client_(client), driver_(std::move(driver)), now_(std::move(now)) {}
  Status writeNetworkStatus(const ClaimRef& ref, const OwnedDevices& owned,
                            const std::map<std::string, dra::NetReport>& reports,
                            const Deadline& deadline) override;
  void cancel() override { client_.cancel(); }

 private:
  kube::KubeClient& client_;
  const std::string driver_;
  const WallClock now_;
};

}  // namespace rdmanet::dp
