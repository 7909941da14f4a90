// The probe pods' manifests and status reading (deviceplugin/doctor/preflight/probe_pods.h).
#include "deviceplugin/doctor/preflight/probe_pods.h"

#include <gtest/gtest.h>

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;

PreflightOptions options() {
  PreflightOptions o;
  o.image = "rdmanet/workload:1";
  o.network = NadRef{.ns = "rdmanet", .name = "rdma-vf-1"};
  return o;
}

TEST(ProbePodsTest, CommandsCarryTheExchangeTheSweepAndThePoolsMarks) {
  auto o = options();
  o.count = 50;
  o.dscp = 24;
  o.priority = 4;
  EXPECT_EQ(serverCommand(o),
            (std::vector<std::string>{"rdmanet-device-plugin", "doctor", "probe", "--listen",
                                      "--exchange", "tcp", "--wait-device", "120"}));
  EXPECT_EQ(clientCommand(o, "10.56.1.2"),
            (std::vector<std::string>{"rdmanet-device-plugin", "doctor", "probe", "10.56.1.2",
                                      "--exchange", "tcp", "--wait-device", "120", "--bandwidth",
                                      "--count", "50", "--mtu-sweep", "--dscp", "24", "--priority",
                                      "4", "--summary-file", "/dev/termination-log"}));
}

TEST(ProbePodsTest, DevicePluginModeAsksForTheResource) {
  const auto o = options();
  const ProbePod pod{.role = Role::kClient,
                     .name = probePodName("ab12", Role::kClient, 3),
                     .node = "rdmanet-vm1",
                     .peer_node = "rdmanet-vm2",
                     .nad = *o.network,
                     .command = {"probe", "x"}};
  EXPECT_EQ(pod.name, "rdmanet-preflight-ab12-client-3");
  const json m = probePodManifest(o, "ab12", pod);
  const json want = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
      "name": "rdmanet-preflight-ab12-client-3", "namespace": "rdmanet",
      "labels": {"app.kubernetes.io/name": "rdmanet-preflight",
                 "rdmanet.io/preflight-run": "ab12", "rdmanet.io/preflight-role": "client"},
      "annotations": {
        "rdmanet.io/preflight-node": "rdmanet-vm1", "rdmanet.io/preflight-peer": "rdmanet-vm2",
        "k8s.v1.cni.cncf.io/networks":
          "[{\"interface\":\"eth1\",\"name\":\"rdma-vf-1\",\"namespace\":\"rdmanet\"}]"}},
    "spec": {
      "nodeSelector": {"kubernetes.io/hostname": "rdmanet-vm1"},
      "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
      "containers": [{
        "name": "probe", "image": "rdmanet/workload:1", "command": ["probe", "x"],
        "terminationMessagePolicy": "File",
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "resources": {"limits": {"rdma/vf": "1"}}}]}})");
  EXPECT_EQ(m, want) << m.dump(2);
}

TEST(ProbePodsTest, DraModeUsesAClaimAndPrivilegedMountsTheHostsDevices) {
  auto o = options();
  o.claim_template = "rdma-vf";
  o.privileged = true;
  o.image_pull_policy = "Never";
  const json m = probePodManifest(
      o, "ab12", {.role = Role::kServer, .name = "s", .node = "n1", .nad = *o.network});
  const json& spec = m["spec"];
  EXPECT_EQ(spec["resourceClaims"],
            json::parse(R"([{"name":"nic","resourceClaimTemplateName":"rdma-vf"}])"));
  const json& c = spec["containers"][0];
  EXPECT_EQ(c["resources"], json::parse(R"({"claims":[{"name":"nic"}]})"));
  EXPECT_EQ(c["imagePullPolicy"], "Never");
  EXPECT_EQ(c["securityContext"],
            json::parse(R"({"capabilities":{"add":["IPC_LOCK"]},"privileged":true})"));
  EXPECT_EQ(c["volumeMounts"],
            json::parse(R"([{"name":"infiniband","mountPath":"/dev/infiniband"}])"));
  EXPECT_EQ(spec["volumes"], json::parse(R"([{"name":"infiniband","hostPath":
      {"path":"/dev/infiniband","type":"DirectoryOrCreate"}}])"));
  EXPECT_EQ(m["metadata"]["labels"]["rdmanet.io/preflight-role"], "server");
  EXPECT_EQ(c["terminationMessagePolicy"], "FallbackToLogsOnError");
  EXPECT_FALSE(m["metadata"]["annotations"].contains("rdmanet.io/preflight-peer"));
}

json withNetworkStatus(const std::string& status) {
  return {{"metadata", {{"annotations", {{"k8s.v1.cni.cncf.io/network-status", status}}}}}};
}

TEST(ProbePodsTest, Eth1Ipv4ComesFromMultusNetworkStatus) {
  const std::string status = R"([
    {"name":"cbr0","interface":"eth0","ips":["10.244.1.5"],"default":true},
    {"name":"rdmanet/rdma-vf-1","interface":"eth1","ips":["fd00::5","192.168.100.11"],
     "mac":"02:00:00:00:00:01"}])";
  EXPECT_EQ(eth1Ipv4(withNetworkStatus(status)), "192.168.100.11");
  EXPECT_EQ(eth1Ipv4(withNetworkStatus(R"([{"interface":"eth0","ips":["10.0.0.1"]}])")),
            std::nullopt);
  EXPECT_EQ(eth1Ipv4(withNetworkStatus("not json")), std::nullopt);
  EXPECT_EQ(eth1Ipv4(json::object()), std::nullopt);
}

TEST(ProbePodsTest, ProgressReadsTheTerminatedContainerAndItsMessage) {
  const auto p = podProgress(json::parse(R"({"status":{"phase":"Failed","containerStatuses":[
      {"name":"probe","state":{"terminated":{"exitCode":1,"reason":"Error",
       "message":"{\"v\":1}"}}}]}})"));
  EXPECT_TRUE(p.terminated);
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_EQ(p.message, R"({"v":1})");
  EXPECT_EQ(p.describe(), "Failed, exit code 1 (Error)");
}

TEST(ProbePodsTest, ProgressOfAnUnschedulablePodNamesTheSchedulersMessage) {
  const auto p = podProgress(json::parse(R"({"status":{"phase":"Pending","conditions":[
      {"type":"PodScheduled","status":"False","reason":"Unschedulable",
       "message":"0/3 nodes are available: 1 Insufficient rdma/vf."}]}})"));
  EXPECT_FALSE(p.terminated);
  EXPECT_EQ(p.describe(),
            "Pending (Unschedulable: 0/3 nodes are available: 1 Insufficient rdma/vf.)");
  const auto w = podProgress(json::parse(R"({"status":{"phase":"Pending","containerStatuses":[
      {"name":"probe","state":{"waiting":{"reason":"ErrImagePull","message":"not found"}}}]}})"));
  EXPECT_EQ(w.describe(), "Pending (ErrImagePull: not found)");
  const auto refused = podProgress(json::parse(R"({"status":{"phase":"Failed",
      "reason":"UnexpectedAdmissionError","message":"Allocate failed due to no healthy devices"}})"));
  EXPECT_EQ(refused.describe(),
            "Failed (UnexpectedAdmissionError: Allocate failed due to no healthy devices)");
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
