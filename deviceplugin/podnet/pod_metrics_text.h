#pragma once
// The pod series on the daemon's /metrics, from one PodSnapshot (Prometheus text 0.0.4). Every
// series is built from the snapshot alone, so a pod missing from it has no series at all.
//
// Per attachment, labels namespace, pod, interface, device (PCI address, "" for none),
// rdma_device and mode, plus port and counter (the driver's raw name) on the RDMA counters:
//   rdmanet_pod_rdma_{cnp_sent,cnp_handled,ecn_marked_packets,out_of_sequence,sequence_errors,
//     retransmits,rnr_naks,rx_bytes,tx_bytes,rx_packets,tx_packets}_total (counter_names.h)
//   rdmanet_pod_rdma_driver_counter_total   every other raw counter
//   rdmanet_pod_vf_{rx,tx}_{bytes,packets,dropped}_total   sriov, where the PF reports them
//   rdmanet_pod_netdev_{rx,tx}_{bytes,packets}_total   the pod's interface, as its netns counts
//     it (pod_reader.h: TCP/UDP through the kernel, not hardware RDMA)
//   rdmanet_pod_device_info{..., uid, netdev, priority} 1   for joins
// Per physical port, labels netdev, device and pods (the sharing pods' "ns/name", sorted):
//   rdmanet_port_pfc_pause_frames_total{..., priority, direction}
//   rdmanet_port_pfc_pause_duration_seconds_total{..., priority, direction}
//   rdmanet_port_link_down_events_total{netdev, device}   (carrier_down_count)

#include <string>

#include "common/base/prometheus_text.h"
#include "deviceplugin/podnet/pod_reader.h"

namespace rdmanet::podnet {

void renderPodMetrics(const PodSnapshot& snap, PrometheusText& out);

}  // namespace rdmanet::podnet
