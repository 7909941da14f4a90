#pragma once
// The DRA front as the daemon runs it (--api dra): the node name (flag or $NODE_NAME), the API
// server (--kubeconfig or the pod's service account), the claim reader and the ResourceSlice
// publisher, kept alive together for as long as the front.
//
// Each of the three (the claim reader, the publisher, the claim status writer) gets an API
// client of its own: a publish or a status write that is retrying or stalled never delays a
// claim's GET, which kubelet's deadline bounds, and shutdown can cancel each alone.

#include <memory>

#include "common/kube/client.h"
#include "deviceplugin/daemon/flags.h"
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
    slices.reset();
    claim_status.reset();
    claims.reset();
    status_client.reset();
    slice_client.reset();
    claim_client.reset();
    claim_client = std::move(other.claim_client);
    slice_client = std::move(other.slice_client);
    status_client = std::move(other.status_client);
    claims = std::move(other.claims);
    claim_status = std::move(other.claim_status);
    slices = std::move(other.slices);
    front = std::move(other.front);
    return *this;
  }

  std::unique_ptr<kube::KubeClient> claim_client{};
  std::unique_ptr<kube::KubeClient> slice_client{};
  std::unique_ptr<kube::KubeClient> status_client{};
  std::unique_ptr<KubeClaimReader> claims{};
  std::unique_ptr<KubeClaimStatusWriter> claim_status{};
  std::unique_ptr<SliceWorker> slices{};
  std::unique_ptr<DraFront> front{};
};

// `env_node_name` is $NODE_NAME (null when unset). Error 4 when no node name is known, 7 for a
// bad one, the kubeconfig's or in-cluster discovery's error otherwise; each message says which
// flag or variable to set.
Result<DraWiring> makeDraWiring(const Flags& flags, const char* env_node_name, const Clock& clock);

}  // namespace rdmanet::dp
