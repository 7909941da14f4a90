#pragma once
// Cross-checking the CNI's attachments with kubelet's own record of which pod got which device
// (the pod-resources API, pod_resources.h), where a device was allocated through kubelet.
//
// The CNI's state is the primary source (it covers every mode, and devices no kubelet API
// allocated), but a state file can outlive its pod when the runtime never sent DEL, and a file
// written by an older CNI carries no pod identity. Kubelet settles both for its devices.

#include <string>
#include <vector>

#include "deviceplugin/podnet/pod_attachments.h"

namespace rdmanet::podnet {

// One pod's devices as kubelet lists them (all resources, all containers), by device ID: for
// rdmanet's pools the ID is the PCI address, and so is a DRA device's, translated by the source.
struct KubeletPod {
  std::string pod_namespace{};
  std::string pod_name{};
  std::vector<std::string> device_ids{};
};

struct CrossCheckResult {
  int filled = 0;   // attachments whose missing pod identity kubelet supplied
  int dropped = 0;  // attachments of a device kubelet gives to another pod (stale state)
};

// Applies kubelet's view to `atts` in place (which keeps its order): for a PCI device kubelet
// lists, an attachment naming no pod gets kubelet's; one naming another pod is dropped when an
// attachment of kubelet's pod holds the device too, and kept (kubelet's allocation can lag the
// CNI's ADD) otherwise. Devices kubelet does not list (macvlan, DRA, plain netconfs) are left
// as they are.
CrossCheckResult crossCheck(std::vector<PodAttachment>& atts, const std::vector<KubeletPod>& pods);

}  // namespace rdmanet::podnet
