#pragma once
// The DRA front as the daemon runs it (--api dra): the node name (flag or $NODE_NAME), the API
// server (--kubeconfig or the pod's service account), the claim reader and the ResourceSlice
// publisher over it, kept alive together for as long as the front.

#include <memory>

#include "common/kube/client.h"
#include "deviceplugin/daemon/flags.h"
#include "deviceplugin/dra/dra_front.h"
#include "deviceplugin/dra/kube_claim_reader.h"
#include "deviceplugin/dra/slice_worker.h"

namespace rdmanet::dp {

struct DraWiring {
  std::unique_ptr<kube::KubeClient> client{};
  std::unique_ptr<KubeClaimReader> claims{};
  std::unique_ptr<SliceWorker> slices{};
  std::unique_ptr<DraFront> front{};
};

// `env_node_name` is $NODE_NAME (null when unset). Error 4 when no node name is known, 7 for a
// bad one, the kubeconfig's or in-cluster discovery's error otherwise; each message says which
// flag or variable to set.
Result<DraWiring> makeDraWiring(const Flags& flags, const char* env_node_name, const Clock& clock);

}  // namespace rdmanet::dp
