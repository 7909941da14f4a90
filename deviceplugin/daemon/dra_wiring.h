#pragma once
// The DRA front as the daemon runs it (--api dra): the node name (flag or $NODE_NAME), the API
// server (--kubeconfig or the pod's service account), the claim reader and the ResourceSlice
// publisher, the recorder of failed prepares' Events, kept alive together for as long as the
// front.
//
// Each of the four (the claim reader, the publisher, the Event recorder, the claim status
// writer) gets an API client of its own: a publish, an Event or a status write that is
// retrying or stalled never delays a claim's GET, which kubelet's deadline bounds, and
// shutdown can cancel each alone.

#include <memory>

#include "common/kube/client.h"
#include "deviceplugin/daemon/flags.h"
#include "deviceplugin/dra/apiserver/event_recorder.h"
#include "deviceplugin/dra/apiserver/kube_claim_reader.h"
#include "deviceplugin/dra/apiserver/kube_claim_status_writer.h"
#include "deviceplugin/dra/apiserver/slice_worker.h"
#include "deviceplugin/dra/dra_front.h"

namespace rdmanet::dp {

struct DraWiring {
  DraWiring() = default;
  DraWiring(DraWiring&&) = default;
  // The old set is torn down first, each part before what it uses (as the destructor does):
  // a member-wise assignment would free the clients while the old front and worker use them.
  DraWiring& operator=(DraWiring&& other) noexcept {
    front.reset();
    events.reset();
    slices.reset();
    claim_status.reset();
    claims.reset();
    event_client.reset();
    status_client.reset();
    slice_client.reset();
    claim_client.reset();
    claim_client = std::move(other.claim_client);
    slice_client = std::move(other.slice_client);
    event_client = std::move(other.event_client);
    status_client = std::move(other.status_client);
    claims = std::move(other.claims);
    claim_status = std::move(other.claim_status);
    slices = std::move(other.slices);
    events = std::move(other.events);
    front = std::move(other.front);
    return *this;
  }

  std::unique_ptr<kube::KubeClient> claim_client{};
  std::unique_ptr<kube::KubeClient> slice_client{};
  std::unique_ptr<kube::KubeClient> event_client{};
  std::unique_ptr<kube::KubeClient> status_client{};
  std::unique_ptr<KubeClaimReader> claims{};
  std::unique_ptr<KubeClaimStatusWriter> claim_status{};
  std::unique_ptr<SliceWorker> slices{};
  std::unique_ptr<KubeEventRecorder> events{};
  std::unique_ptr<DraFront> front{};
};

// `env_node_name` is $NODE_NAME (null when unset). Error 4 when no node name is known, 7 for a
// bad one, the kubeconfig's or in-cluster discovery's error otherwise; each message says which
// flag or variable to set. `metrics` (may be null) gets the claims' series and the Events'.
Result<DraWiring> makeDraWiring(const Flags& flags, const char* env_node_name, const Clock& clock,
                                Metrics* metrics = nullptr);

}  // namespace rdmanet::dp
