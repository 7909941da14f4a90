#pragma once
// Kubelet's pod-resources API (v1 List on <kubelet-dir>/pod-resources/kubelet.sock) as the pod
// map's cross-check source (podnet/kubelet_check.h): which pod kubelet gave each device to.

#include <chrono>
#include <filesystem>
#include <memory>

#include "deviceplugin/podnet/pod_metrics.h"

namespace rdmanet::dp {

// One List per call, on a fresh channel (kubelet restarts replace the socket), bounded by
// `deadline`. Error 11 when the socket is missing or kubelet does not answer in time, 101 for
// any other gRPC failure. A pod's devices are merged over its containers: device-plugin IDs
// (rdmanet's are PCI addresses) of every resource, and the PCI address of each DRA device
// `dra_driver` allocated (kubelet lists those when KubeletPodResourcesDynamicResources is on,
// the default from 1.34).
std::unique_ptr<podnet::KubeletPodSource> makePodResourcesSource(std::filesystem::path socket,
                                                                 std::chrono::milliseconds deadline,
                                                                 std::string dra_driver);

}  // namespace rdmanet::dp
