// The pre-flight's flow through the Kubernetes API (deviceplugin/doctor/preflight/run.h) against
// the stand-in API server (tests/fakes/apiserver): the test plays kubelet and Multus at each of
// the run's poll ticks, on a SteppingClock, so nothing sleeps for real.
#include "deviceplugin/doctor/preflight/run.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "deviceplugin/doctor/counters.h"
#include "deviceplugin/doctor/preflight/preflight.h"
#include "deviceplugin/doctor/preflight/probe_pods.h"
#include "deviceplugin/doctor/preflight/render.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/fakes/stepping_clock.h"

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

constexpr const char* kNs = "rdmanet";

std::string metricsOf(const std::string& lossless_verdict, uint64_t oos) {
  return "rdmanet_doctor_check{check=\"mtu\",device=\"eth1\"} 0\n"
         "rdmanet_doctor_check{check=\"lossless\",device=\"rxe0\"} " +
         lossless_verdict +
         "\n"
         "rdmanet_doctor_rdma_counter{port=\"rxe0/1\",counter=\"out_of_sequence\",class="
         "\"retransmit\"} " +
         std::to_string(oos) + "\n";
}

// A clean probe summary between two nodes whose eth1 MTUs are given.
json summary(int local_mtu, int peer_mtu) {
  return {{"v", 1},
          {"pass", true},
          {"failed_stage", ""},
          {"error", ""},
          {"traffic_class", 104},
          {"rtt_p50_us", 20},
          {"rtt_p99_us", 45},
          {"rtts", 200},
          {"count", 200},
          {"gbps", 9.6},
          {"port_gbps", 10},
          {"local_mtu", local_mtu},
          {"peer_mtu", peer_mtu},
          {"path_mtu", std::min(local_mtu, peer_mtu)},
          {"roce_mtu", std::min(local_mtu, peer_mtu) >= 1100 ? 1024 : 512},
          {"counters_delta", json::object()}};
}

// kubelet, the scheduler and Multus, one step per poll tick: server pods get Running and an
// eth1 address; client pods run their probe at once and end with the summary as their
// termination message.
class FakeKubelet {
 public:
  explicit FakeKubelet(kube::KubeClient& c) : c_(c) {}
  std::map<std::string, int> mtu{};       // node -> its eth1 MTU
  std::set<std::string> unschedulable{};  // nodes whose probe pods never get scheduled
  std::vector<std::vector<std::string>> client_commands{};
  std::map<std::string, std::string> message{};      // node -> its client's termination message
  std::vector<json> specs{};                         // every probe pod's spec, as created
  std::map<std::string, std::string> server_dies{};  // node -> its server's last log line

  void step() {
    auto pods = c_.list(std::string("/api/v1/namespaces/") + kNs + "/pods",
                        {.label_selector = "app.kubernetes.io/name=rdmanet-preflight"});
    ASSERT_TRUE(pods.ok()) << pods.error().msg;
    for (const auto& p : (*pods)["items"]) {
      const std::string name = p["metadata"]["name"];
      const std::string node = p["metadata"]["annotations"]["rdmanet.io/preflight-node"];
      const std::string role = p["metadata"]["labels"]["rdmanet.io/preflight-role"];
      if (p["status"].value("phase", "") != "Pending") continue;
      specs.push_back(p["spec"]);
      if (unschedulable.contains(node)) {
        setStatus(name, {{"phase", "Pending"},
                         {"conditions",
                          {{{"type", "PodScheduled"},
                            {"status", "False"},
                            {"reason", "Unschedulable"},
                            {"message", "0/2 nodes are available: 1 Insufficient rdma/vf."}}}}});
        continue;
      }
      if (role == "server" && server_dies.contains(node)) {
        setStatus(
            name,
            {{"phase", "Failed"},
             {"containerStatuses",
              {{{"name", "probe"},
                {"image", "img"},
                {"imageID", ""},
                {"ready", false},
                {"restartCount", 0},
                {"state",
                 {{"terminated",
                   {{"exitCode", 2}, {"reason", "Error"}, {"message", server_dies[node]}}}}}}}}});
      } else if (role == "server") {
        json updated = p;
        updated["metadata"]["annotations"]["k8s.v1.cni.cncf.io/network-status"] =
            json::array({{{"name", "cbr0"}, {"interface", "eth0"}, {"ips", {"10.244.0.9"}}},
                         {{"name", "rdmanet/nad"}, {"interface", "eth1"}, {"ips", {ipOf(node)}}}})
                .dump();
        ASSERT_TRUE(c_.update(path(name), updated).ok());
        setStatus(name, {{"phase", "Running"}});
      } else {
        const std::vector<std::string> cmd = p["spec"]["containers"][0]["command"];
        client_commands.push_back(cmd);
        const std::string peer = p["metadata"]["annotations"]["rdmanet.io/preflight-peer"];
        setStatus(name, {{"phase", "Succeeded"},
                         {"containerStatuses",
                          {{{"name", "probe"},
                            {"image", "img"},
                            {"imageID", ""},
                            {"ready", false},
                            {"restartCount", 0},
                            {"state",
                             {{"terminated",
                               {{"exitCode", 0},
                                {"reason", "Completed"},
                                {"message", message.contains(node)
                                                ? message[node]
                                                : summary(mtu[node], mtu[peer]).dump()}}}}}}}}});
      }
    }
  }

  static std::string ipOf(const std::string& node) {
    return "192.168.100." + std::to_string(10 + (node.back() - '0'));
  }

 private:
  std::string path(const std::string& name) {
    return std::string("/api/v1/namespaces/") + kNs + "/pods/" + name;
  }
  void setStatus(const std::string& name, const json& status) {
    auto got = c_.get(path(name));
    ASSERT_TRUE(got.ok()) << got.error().msg;
    json pod = *got;
    pod["status"] = status;
    auto put = c_.update(path(name) + "/status", pod);
    ASSERT_TRUE(put.ok()) << put.error().msg;
  }
  kube::KubeClient& c_;
};

class PreflightRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!server_.ok()) GTEST_SKIP() << server_.error();
    for (const std::string n : {"rdmanet-vm1", "rdmanet-vm2"}) {
      addNode(n, "4");
      kubelet_.mtu[n] = 1500;
      addDaemon(n, metricsOf("0", 7));
    }
    addNode("control-plane", "0");
    for (const std::string nad : {"rdma-vf-1", "rdma-vf-2"}) {
      ASSERT_TRUE(
          client_
              .create(
                  "/apis/k8s.cni.cncf.io/v1/namespaces/rdmanet/"
                  "network-attachment-definitions",
                  {{"apiVersion", "k8s.cni.cncf.io/v1"},
                   {"kind", "NetworkAttachmentDefinition"},
                   {"metadata", {{"name", nad}}},
                   {"spec", {{"config", R"({"cniVersion":"1.0.0","type":"rdmanet","mtu":1500})"}}}})
              .ok());
    }
    options_.image = "rdmanet/workload:1";
    options_.node_networks = {{"rdmanet-vm1", {kNs, "rdma-vf-1"}},
                              {"rdmanet-vm2", {kNs, "rdma-vf-2"}}};
    options_.timeout_s = 10;
  }

  void addNode(const std::string& name, const std::string& vfs) {
    ASSERT_TRUE(client_
                    .create("/api/v1/nodes", {{"apiVersion", "v1"},
                                              {"kind", "Node"},
                                              {"metadata", {{"name", name}}},
                                              {"status", {{"allocatable", {{"rdma/vf", vfs}}}}}})
                    .ok());
  }
  // rdmanet's daemon pod on `node`, Running, whose /metrics answers `metrics` ("" : nothing
  // listens).
  void addDaemon(const std::string& node, const std::string& metrics) {
    const std::string name = "rdmanet-node-" + node.substr(node.size() - 3);
    auto pod = client_.create(
        "/api/v1/namespaces/rdmanet/pods",
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata",
          {{"name", name},
           {"labels",
            {{"app.kubernetes.io/name", "rdmanet"}, {"app.kubernetes.io/component", "node"}}}}},
         {"spec", {{"nodeName", node}, {"containers", {{{"name", "dp"}, {"image", "rdmanet"}}}}}}});
    ASSERT_TRUE(pod.ok()) << pod.error().msg;
    json running = *pod;
    running["status"] = {{"phase", "Running"}};
    ASSERT_TRUE(
        client_.update("/api/v1/namespaces/rdmanet/pods/" + name + "/status", running).ok());
    if (!metrics.empty()) server_.setProxyAnswer(kNs, name, "9109", "/metrics", metrics);
  }

  PreflightSeams seams() {
    return {.client = &client_,
            .clock = &clock_,
            .tick =
                [this] {
                  if (tick_hook_) tick_hook_();
                  kubelet_.step();
                  clock_.sleepFor(std::chrono::seconds(1));
                },
            .wall_seconds = [] { return int64_t{1796000000}; },
            .run_id = "run2",
            .stop = &stop_};
  }

  // The pre-flight's pods still in the namespace.
  size_t preflightPods() {
    auto pods = client_.list("/api/v1/namespaces/rdmanet/pods",
                             {.label_selector = "app.kubernetes.io/name=rdmanet-preflight"});
    EXPECT_TRUE(pods.ok());
    return pods.ok() ? (*pods)["items"].size() : 0;
  }

  FakeApiServer server_;
  testing::SteppingClock clock_;
  kube::KubeClient client_{server_.config(), {.retry = {.max_attempts = 1}, .clock = &clock_}};
  FakeKubelet kubelet_{client_};
  PreflightOptions options_{};
  std::atomic<bool> stop_{false};
  std::function<void()> tick_hook_{};
};

TEST_F(PreflightRunTest, ACleanClusterPassesRecordsTheBaselineAndLeavesNoPod) {
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->verdict, Verdict::kPass) << renderPreflightTable(*r);
  ASSERT_EQ(r->pairs.size(), 2u);
  EXPECT_EQ(r->pairs[0].pair, (NodePair{"rdmanet-vm1", "rdmanet-vm2"}));
  EXPECT_EQ(r->pairs[1].pair, (NodePair{"rdmanet-vm2", "rdmanet-vm1"}));
  EXPECT_EQ(r->pairs[0].summary->gbps, 9.6);
  // Each client went to its server's eth1 address, as Multus reported it.
  ASSERT_EQ(kubelet_.client_commands.size(), 2u);
  EXPECT_EQ(kubelet_.client_commands[0].at(3), FakeKubelet::ipOf("rdmanet-vm2"));
  EXPECT_EQ(kubelet_.client_commands[1].at(3), FakeKubelet::ipOf("rdmanet-vm1"));
  ASSERT_EQ(r->nodes.size(), 2u);
  EXPECT_EQ(r->nodes[0].daemon_pod, "rdmanet/rdmanet-node-vm1");
  EXPECT_EQ(r->nodes[0].checklist(), Verdict::kPass);
  EXPECT_EQ(preflightPods(), 0u);

  ASSERT_TRUE(r->baseline.has_value());
  EXPECT_EQ(r->baseline->error, "");
  EXPECT_EQ(r->baseline->configmap, "rdmanet/rdmanet-preflight-baseline");
  auto cm = client_.get("/api/v1/namespaces/rdmanet/configmaps/rdmanet-preflight-baseline");
  ASSERT_TRUE(cm.ok()) << cm.error().msg;
  auto snap = snapshotFromJson((*cm)["data"]["rdmanet-vm2"].get<std::string>());
  ASSERT_TRUE(snap.ok()) << snap.error().msg;
  EXPECT_EQ(snap->taken_at, 1796000000);
  EXPECT_EQ(snap->ports["rxe0/1"]["out_of_sequence"], 7u);
}

TEST_F(PreflightRunTest, ABaselineUpdateKeepsOtherNodesKeys) {
  ASSERT_TRUE(client_
                  .create("/api/v1/namespaces/rdmanet/configmaps",
                          {{"apiVersion", "v1"},
                           {"kind", "ConfigMap"},
                           {"metadata", {{"name", "rdmanet-preflight-baseline"}}},
                           {"data", {{"rdmanet-vm9", "{}"}, {"rdmanet-vm1", "old"}}}})
                  .ok());
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto cm = client_.get("/api/v1/namespaces/rdmanet/configmaps/rdmanet-preflight-baseline");
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ((*cm)["data"]["rdmanet-vm9"], "{}");
  EXPECT_NE((*cm)["data"]["rdmanet-vm1"], "old");
}

TEST_F(PreflightRunTest, AnMtuLoweredOnOneNodeNamesThatNodeInBothItsPairs) {
  kubelet_.mtu["rdmanet-vm2"] = 1000;
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->verdict, Verdict::kFail);
  const auto problems = r->problems();
  ASSERT_EQ(problems.size(), 2u);
  for (const auto& p : problems) {
    EXPECT_EQ(p.check, "mtu");
    EXPECT_NE(p.cause.find("node rdmanet-vm2's eth1 MTU 1000 is below the NAD rdmanet/rdma-vf-2's "
                           "1500"),
              std::string::npos)
        << p.cause;
    EXPECT_EQ(p.cause.find("node rdmanet-vm1's"), std::string::npos) << p.cause;
  }
}

TEST_F(PreflightRunTest, AClientWithoutASummaryFailsItsPairWithTheReason) {
  kubelet_.message["rdmanet-vm2"] = "rdmanet-device-plugin: unknown flag --mtu-sweep";
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->pairs[0].verdict, Verdict::kPass);
  EXPECT_EQ(r->pairs[1].verdict, Verdict::kFail);
  EXPECT_EQ(r->pairs[1].failure,
            "the probe client pod rdmanet-preflight-run2-client-1 on rdmanet-vm2 left an "
            "unreadable summary (the probe's summary is not JSON): Succeeded, exit code 0 "
            "(Completed), saying \"rdmanet-device-plugin: unknown flag --mtu-sweep\"");
  EXPECT_EQ(preflightPods(), 0u);
}

// DRA mode: the nodes are those with the driver's ResourceSlices, each pod's device a claim.
TEST_F(PreflightRunTest, DraModeFindsTheNodesBySlicesAndClaimsTheDevice) {
  for (const std::string n : {"rdmanet-vm1", "rdmanet-vm2"}) {
    auto s =
        client_.create("/apis/resource.k8s.io/v1/resourceslices",
                       {{"apiVersion", "resource.k8s.io/v1"},
                        {"kind", "ResourceSlice"},
                        {"metadata", {{"name", n + "-rdma"}}},
                        {"spec",
                         {{"driver", "rdma.rdmanet.io"},
                          {"nodeName", n},
                          {"pool", {{"name", n}, {"generation", 1}, {"resourceSliceCount", 1}}},
                          {"devices", {{{"name", "vf-0"}}}}}}});
    ASSERT_TRUE(s.ok()) << s.error().msg;
  }
  options_.resource = "rdma/none";  // not how DRA mode finds nodes
  options_.claim_template = "rdma-vf";
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->verdict, Verdict::kPass);
  ASSERT_EQ(kubelet_.specs.size(), 4u);  // 2 servers, 2 clients
  for (const auto& spec : kubelet_.specs) {
    EXPECT_EQ(spec["resourceClaims"][0]["resourceClaimTemplateName"], "rdma-vf");
    EXPECT_EQ(spec["containers"][0]["resources"], json::parse(R"({"claims":[{"name":"nic"}]})"));
  }
}

TEST_F(PreflightRunTest, AServerThatNeverRunsFailsItsPairsNamingTheNodeAndItsPodsAreDeleted) {
  kubelet_.unschedulable = {"rdmanet-vm2"};
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->verdict, Verdict::kFail);
  ASSERT_EQ(r->pairs.size(), 2u);
  EXPECT_EQ(r->pairs[0].verdict, Verdict::kFail);
  EXPECT_EQ(r->pairs[0].failure,
            "the probe server pod rdmanet-preflight-run2-server-1 on rdmanet-vm2 was not running "
            "with an eth1 address after 10 s: Pending (Unschedulable: 0/2 nodes are available: 1 "
            "Insufficient rdma/vf.)");
  // vm2's client cannot be scheduled either: it fails by the deadline, naming vm2.
  EXPECT_NE(r->pairs[1].failure.find("on rdmanet-vm2 did not finish within 10 s"),
            std::string::npos)
      << r->pairs[1].failure;
  EXPECT_EQ(preflightPods(), 0u);
}

TEST_F(PreflightRunTest, AServerThatDiesFailsItsPairsWithItsLastWords) {
  kubelet_.server_dies["rdmanet-vm1"] =
      "probe: --wait-device: no RDMA device on eth1 after 120 s\n";
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->pairs[0].verdict, Verdict::kPass);
  EXPECT_EQ(r->pairs[1].failure,
            "the probe server pod rdmanet-preflight-run2-server-0 on rdmanet-vm1 ended: Failed, "
            "exit code 2 (Error), saying \"probe: --wait-device: no RDMA device on eth1 after 120 "
            "s\"");
  EXPECT_EQ(preflightPods(), 0u);
}

TEST_F(PreflightRunTest, AnUnreachableDaemonMakesItsNodeUnknownNotTheRunFail) {
  ASSERT_TRUE(client_.remove("/api/v1/namespaces/rdmanet/pods/rdmanet-node-vm2").ok());
  addDaemon("rdmanet-vm2", "");  // running, but nothing answers on 9109
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->verdict, Verdict::kUnknown);
  EXPECT_EQ(r->nodes[1].checklist(), Verdict::kUnknown);
  EXPECT_NE(r->nodes[1].reason.find("reading rdmanet/rdmanet-node-vm2's /metrics"),
            std::string::npos)
      << r->nodes[1].reason;
  EXPECT_EQ(r->pairs[0].verdict, Verdict::kPass);
  EXPECT_EQ(r->baseline->nodes, std::vector<std::string>{"rdmanet-vm1"});
}

TEST_F(PreflightRunTest, AFailingChecklistOnOneNodeFailsTheRunNamingIt) {
  server_.setProxyAnswer(kNs, "rdmanet-node-vm1", "9109", "/metrics", metricsOf("2", 7));
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->verdict, Verdict::kFail);
  const auto problems = r->problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].subject, "node rdmanet-vm1");
  EXPECT_EQ(problems[0].message, "doctor check lossless on rxe0 is FAIL");
}

TEST_F(PreflightRunTest, AnEarlierRunsLeftoverPodsAreDeletedFirst) {
  PreflightOptions other = options_;
  other.keep = true;
  auto seams_old = seams();
  seams_old.run_id = "run1";
  ASSERT_TRUE(runPreflight(other, seams_old).ok());
  EXPECT_EQ(preflightPods(), 2u);  // --keep: the two servers (clients are deleted as they end)
  auto r = runPreflight(options_, seams());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(preflightPods(), 0u);
}

TEST_F(PreflightRunTest, AnInterruptedRunDeletesItsPods) {
  tick_hook_ = [this] {
    if (preflightPods() > 0) stop_ = true;
  };
  auto r = runPreflight(options_, seams());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("interrupted"), std::string::npos);
  EXPECT_EQ(preflightPods(), 0u);
}

TEST_F(PreflightRunTest, FewerThanTwoNodesIsAnErrorBeforeAnyPod) {
  options_.resource = "rdma/hca";
  auto r = runPreflight(options_, seams());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().msg,
            "0 nodes to test (nodes with rdma/hca > 0): a pre-flight needs 2 or more");
  options_.nodes = {"rdmanet-vm1"};
  EXPECT_EQ(runPreflight(options_, seams()).error().msg,
            "1 node to test (--nodes): a pre-flight needs 2 or more");
  EXPECT_EQ(preflightPods(), 0u);
}

TEST_F(PreflightRunTest, NoRightToMakePodsIsAnErrorNotAFailOfEveryPair) {
  server_.fail("POST", "/api/v1/namespaces/rdmanet/pods", 403);
  auto r = runPreflight(options_, seams());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 403);
  EXPECT_TRUE(
      r.error().msg.starts_with("creating pod rdmanet-preflight-run2-server-0 on "
                                "rdmanet-vm1: "))
      << r.error().msg;
  EXPECT_EQ(preflightPods(), 0u);
}

TEST_F(PreflightRunTest, AMissingNadIsAnErrorBeforeAnyPod) {
  options_.node_networks["rdmanet-vm2"] = {kNs, "nope"};
  auto r = runPreflight(options_, seams());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(
      r.error().msg.starts_with("NetworkAttachmentDefinition rdmanet/nope does not exist: "))
      << r.error().msg;
  EXPECT_EQ(preflightPods(), 0u);
}

// The command line end to end: flags, the run, JSON out, the exit code.
TEST_F(PreflightRunTest, TheCommandPrintsJsonAndExitsOneOnAFail) {
  kubelet_.mtu["rdmanet-vm1"] = 1000;
  PreflightCliDeps deps{
      .kube_config =
          [this](const PreflightOptions&) { return Result<kube::KubeConfig>(server_.config()); },
      .client = {.retry = {.max_attempts = 1}},
      .clock = &clock_,
      .tick = seams().tick,
      .wall_seconds = [] { return int64_t{1796000000}; },
      .run_id = [] { return std::string("cli1"); }};
  std::ostringstream out, err;
  const int code =
      runPreflightCli({"--image", "img:1", "--node-network", "rdmanet-vm1=rdma-vf-1",
                       "--node-network", "rdmanet-vm2=rdma-vf-2", "--timeout", "10", "--json"},
                      deps, out, err);
  EXPECT_EQ(code, 1) << err.str();
  const json j = json::parse(out.str());
  EXPECT_EQ(j["run"], "cli1");
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["pairs"].size(), 2u);
  EXPECT_EQ(j["pairs"][0]["path_mtu"], 1000);
  EXPECT_EQ(j["baseline"]["configmap"], "rdmanet/rdmanet-preflight-baseline");
  EXPECT_EQ(j["baseline"]["taken_at"], "2026-11-30T00:53:20Z");
  EXPECT_EQ(preflightPods(), 0u);
  std::ostringstream out2, err2;
  EXPECT_EQ(runPreflightCli({"--image", "i", "--network", "n", "--nodes", "rdmanet-vm1"}, deps,
                            out2, err2),
            2);
  EXPECT_NE(err2.str().find("1 node to test"), std::string::npos) << err2.str();
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
