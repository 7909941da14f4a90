#include "deviceplugin/daemon/dra_wiring.h"

#include <fmt/format.h>

#include "common/kube/curl_library.h"

namespace rdmanet::dp {

Result<DraWiring> makeDraWiring(const Flags& flags, const char* env_node_name, const Clock& clock,
                                Metrics* metrics) {
  std::string node = flags.node_name;
  if (node.empty() && env_node_name) node = env_node_name;
  if (node.empty()) {
    return makeError(ErrorCode::kInvalidEnv,
                     "--api dra needs this node's name: pass --node-name or set NODE_NAME (the "
                     "chart sets it from the downward API, spec.nodeName)");
  }
  Result<kube::KubeConfig> cfg = flags.kubeconfig.empty()
                                     ? kube::inClusterConfig(kube::inClusterEnvFromProcess())
                                     : kube::loadKubeconfig(flags.kubeconfig);
  if (!cfg.ok()) {
    return makeError(cfg.error().code,
                     fmt::format("API server access ({}): {}",
                                 flags.kubeconfig.empty() ? "in-cluster; --kubeconfig FILE to "
                                                            "run outside a pod"
                                                          : "--kubeconfig",
                                 cfg.error().msg));
  }
  // libcurl is loaded here rather than at the first request, so a node without it fails at start.
  if (auto curl = kube::libcurl(); !curl.ok()) return curl.error();
  DraWiring w;
  // Both back off and meet their deadlines on the daemon's clock.
  w.claim_client = std::make_unique<kube::KubeClient>(*cfg, kube::ClientOptions{.clock = &clock});
  w.slice_client = std::make_unique<kube::KubeClient>(*cfg, kube::ClientOptions{.clock = &clock});
  w.status_client = std::make_unique<kube::KubeClient>(*cfg, kube::ClientOptions{.clock = &clock});
  w.event_client = std::make_unique<kube::KubeClient>(std::move(cfg).value(),
                                                      kube::ClientOptions{.clock = &clock});
  w.claims = std::make_unique<KubeClaimReader>(*w.claim_client);
  w.events = std::make_unique<KubeEventRecorder>(
      *w.event_client, EventRecorderOptions{.host = node}, clock, metrics);
  w.claim_status = std::make_unique<KubeClaimStatusWriter>(*w.status_client, flags.driver_name);
  dra::PublisherOptions po;
  po.driver = flags.driver_name;
  po.node_name = node;
  w.slices = std::make_unique<SliceWorker>(*w.slice_client, std::move(po), flags.sysfs_root, clock);
  w.front = std::make_unique<DraFront>(
      DraFrontOptions{.kubelet_dir = flags.kubelet_dir,
                      .driver = flags.driver_name,
                      .node = node,
                      .cdi_dir = flags.cdi_dir,
                      .pod_devices_dir = flags.dra_pod_devices_dir,
                      .device_metadata = flags.dra_device_metadata,
                      .allow_multiple_allocations = flags.dra_allow_multiple_allocations},
      DraFrontDeps{.clock = &clock,
                   .claims = w.claims.get(),
                   .publisher = w.slices.get(),
                   .metrics = metrics,
                   .events = w.events.get(),
                   .claim_status = w.claim_status.get()});
  return w;
}

}  // namespace rdmanet::dp
