// Prints what the daemon's /metrics serves (the daemon's series, the DRA front's ResourceSlice
// series, then the doctor's, then the pods', as daemon/probes.cc concatenates them) for a node in a
// busy state: pools with hostile names, every counter family, histograms, and a doctor run with
// failures and counter deltas. The parse test (parse_metrics.py) reads it with the Prometheus
// client library's own parser.
#include <iostream>

#include "deviceplugin/doctor/render.h"
#include "deviceplugin/dra/apiserver/slice_metrics.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/podnet/pod_metrics_text.h"
#include "tests/deviceplugin/doctor/doctor_node.h"

int main() {
  using rdmanet::dp::Metrics;
  Metrics m;
  // A resource name with every character the format must escape in a label value.
  const std::string hostile = "rdma/we\"ird\\name\nnext";
  for (const std::string& r : {std::string("rdma/vf"), hostile}) {
    m.setPoolDevices(r, 3, 1);
    m.setRegistered(r, true);
    m.countRegistration(r, "ok");
    m.countRegistration(r, "refused");
    m.countHealthTransition(r, false);
    m.countAllocation(r, true);
    m.countAllocation(r, false);
    for (double s : {0.00005, 0.0002, 0.003, 0.04, 2.0}) m.observeAllocateSeconds(r, s);
  }
  m.setPoolDevices("rdma/shared", 0, 0);  // registered never, no counters
  // A DRA node's claims: prepares that took from 3 ms to 40 s, one failed; Events of failures.
  for (double s : {0.003, 0.2, 1.5, 40.0}) m.observeClaimOperation("prepare", s < 1, s);
  m.observeClaimOperation("unprepare", true, 0.001);
  for (const char* r : {"sent", "repeat", "repeat", "dropped"}) m.countEvent(r);
  // LLDP neighbours: one with a rail, one whose switch names itself with characters to escape.
  m.setPortNeighbors({{"ens1f0",
                       {.switch_name = "leaf-7",
                        .chassis_id = "0c:42:a1:00:00:07",
                        .port_id = "Ethernet1/3",
                        .rail = "rail-3"}},
                      {"ens2f1", {.switch_name = hostile, .chassis_id = "c", .port_id = "p"}}});

  rdmanet::doctor::testing::DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens2f1/mtu", "1500");
  const auto baseline = node.run().counters;
  node.tree().writeAttr("/sys/class/infiniband/mlx5_0/ports/1/hw_counters/roce_adp_retrans", "5");
  rdmanet::doctor::DoctorReport report = node.run({}, &baseline);
  report.results.push_back({.check = "x",
                            .device = "a\"b\\c\nd",
                            .verdict = rdmanet::doctor::Verdict::kWarn,
                            .evidence = {}});
  // A DRA node whose API server runs without DRADeviceTaints: taints dropped, shared pools fine.
  const std::string slices = rdmanet::dp::renderSliceMetrics(
      {.published_version = 4, .generation = 7, .failures = 2, .taints_dropped = true});
  // The pod series (podnet): an sriov pod with mlx5 counters, VF traffic and a port with PFC.
  rdmanet::podnet::DeviceReading dev;
  dev.dev.att = {.container_id = "c1",
                 .ifname = "net1",
                 .pod_namespace = "ml",
                 .pod_name = "trainer-\"0\"",
                 .pod_uid = "6f1c",
                 .mode = "sriov",
                 .pci = "0000:03:00.2",
                 .host_netdev = "ens1f0v0",
                 .priority = 3};
  dev.dev.rdma_device = "mlx5_2";
  dev.ports[1] = {
      {"out_of_sequence", 7}, {"np_cnp_sent", 3}, {"port_xmit_data", 10}, {"duplicate_request", 1}};
  dev.vf = rdmanet::VfTraffic{.rx_packets = 1, .tx_packets = 2, .rx_bytes = 3, .tx_bytes = 4};
  dev.netdev = rdmanet::podnet::NetdevTraffic{
      .rx_bytes = 5, .tx_bytes = 2100000000, .rx_packets = 7, .tx_packets = 8};
  rdmanet::podnet::PortReading port{
      .netdev = "ens1f0",
      .pci = "0000:03:00.0",
      .pfc = {{.priority = 3, .direction = "rx", .frames = 9, .duration_us = 1500}},
      .carrier_down = 2,
      .pods = {"ml/trainer-\"0\""}};
  rdmanet::PrometheusText pods;
  rdmanet::podnet::renderPodMetrics({.devices = {dev}, .ports = {port}}, pods);
  std::cout << m.render() << slices << rdmanet::doctor::renderPrometheus(report) << pods.str();
  return 0;
}
