// rdmanet-dra-bench-client: timing probes for bench/dra_bench.sh, speaking to the stand-in API
// server over REST (common/kube, the daemon's own client) and to the daemon's DRA socket over
// kubelet's dra/v1 gRPC API (no kubelet in the measured path).
//   node --server URL --name N          creates the Node the slices' owner reference names
//   slices --server URL --node N --want D --since-ns T0 [--timeout S]
//        polls the node's ResourceSlices (10 ms apart) until the pool is complete: as many
//        slices as its resourceSliceCount, one generation, D devices in all; reports the time
//        from T0 (CLOCK_REALTIME ns, taken just before the daemon started)
//   prepare --server URL --socket S --node N --driver D [--n N]
//        N claims (after 50 unmeasured), one device each, taken in turn from the published
//        slices. Per claim: create it with its allocation result (untimed), GET it as the
//        daemon will (timed: the API server's share), NodePrepareResources (timed: full path,
//        GET included), NodePrepareResources again (timed: answered from the checkpoint, no
//        GET and no write), NodeUnprepareResources (timed), delete it (untimed).
// Output: one JSON object on stdout.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "common/kube/client.h"
#include "proto/kubelet/dra/v1/api.grpc.pb.h"
#include "tests/deviceplugin/bench/latency_stats.h"
#include "tests/fakes/eventually.h"

namespace {

namespace dra = ::k8s::io::kubelet::pkg::apis::dra::v1;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/bench/resourceclaims";

rdmanet::kube::KubeConfig serverConfig(const std::string& url) {
  rdmanet::kube::KubeConfig c;
  c.server = url;
  return c;
}

json must(rdmanet::Result<json> r, const std::string& what) {
  if (!r.ok()) throw std::runtime_error(what + ": " + r.error().msg);
  return std::move(*r);
}

json listSlices(rdmanet::kube::KubeClient& c, const std::string& node) {
  rdmanet::kube::ListOptions lo;
  lo.field_selector = "spec.nodeName=" + node;
  return must(c.list(kSlices, lo), "list resourceslices");
}

// {"complete":bool,"slices":n,"devices":n,"generation":g}
json poolState(const json& list) {
  size_t devices = 0;
  int64_t want_slices = -1, generation = -1;
  bool one_generation = true;
  for (const auto& s : list["items"]) {
    devices += s["spec"]["devices"].size();
    const auto& pool = s["spec"]["pool"];
    const int64_t g = pool["generation"].get<int64_t>();
    if (generation >= 0 && g != generation) one_generation = false;
    generation = std::max(generation, g);
    want_slices = pool["resourceSliceCount"].get<int64_t>();
  }
  const size_t n = list["items"].size();
  return {{"complete", one_generation && n > 0 && static_cast<int64_t>(n) == want_slices},
          {"slices", n},
          {"devices", devices},
          {"generation", generation}};
}

json waitSlices(const std::string& url, const std::string& node, size_t want, int64_t since_ns,
                int timeout_s) {
  rdmanet::kube::KubeClient c(serverConfig(url));
  int polls = 0;
  json st;
  const bool complete = rdmanet::testing::eventually(
      [&] {
        st = poolState(listSlices(c, node));
        ++polls;
        return st["complete"] && st["devices"] == want;
      },
      std::chrono::seconds(timeout_s), 10ms);
  if (!complete) throw std::runtime_error("slices incomplete: " + st.dump());
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  st["ms"] = static_cast<double>(now_ns - since_ns) / 1e6;
  st["polls"] = polls;
  return st;
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

template <typename Req>
void setClaim(Req& req, const std::string& uid, const std::string& name) {
  auto* c = req.add_claims();
  c->set_namespace_("bench");
  c->set_uid(uid);
  c->set_name(name);
}

json timePrepare(const std::string& url, const std::string& socket, const std::string& node,
                 const std::string& driver, int n) {
  rdmanet::kube::KubeClient c(serverConfig(url));
  std::vector<std::string> devices;
  const json slices = listSlices(c, node);  // kept: a temporary's items would dangle
  for (const auto& s : slices["items"]) {
    for (const auto& d : s["spec"]["devices"]) devices.push_back(d["name"]);
  }
  if (devices.empty()) throw std::runtime_error("no published devices");
  auto stub = dra::DRAPlugin::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  std::vector<double> get_us, prep_us, again_us, unprep_us;
  int errors = 0;
  std::string first_error;
  auto fail = [&](const std::string& what) {
    if (errors++ == 0) first_error = what;
  };
  const int warm = 50;  // warm the channel and both connections up, not counted
  for (int i = 0; i < n + warm; ++i) {
    const std::string name = "bench-" + std::to_string(i);
    json claim = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceClaim"},
        {"metadata", {{"name", name}, {"namespace", "bench"}}},
        {"spec",
         {{"devices",
           {{"requests",
             {{{"name", "nic"}, {"exactly", {{"deviceClassName", "rdma-vf"}, {"count", 1}}}}}}}}}},
        {"status",
         {{"allocation",
           {{"devices",
             {{"results",
               {{{"request", "nic"},
                 {"driver", driver},
                 {"pool", node},
                 {"device", devices[i % devices.size()]}}}}}}}}}}};
    const std::string uid = must(c.create(kClaims, claim), "create claim")["metadata"]["uid"];

    auto t0 = Clock::now();
    must(c.get(std::string(kClaims) + "/" + name), "get claim");
    const double get = since(t0);

    auto prepare = [&](std::vector<double>& out) {
      dra::NodePrepareResourcesRequest req;
      setClaim(req, uid, name);
      dra::NodePrepareResourcesResponse resp;
      grpc::ClientContext ctx;
      auto t = Clock::now();
      grpc::Status st = stub->NodePrepareResources(&ctx, req, &resp);
      const double us = since(t);
      if (!st.ok()) {
        fail("NodePrepareResources: " + st.error_message());
      } else if (const auto& c = resp.claims().at(uid); !c.error().empty()) {
        fail("NodePrepareResources: " + c.error());
      } else if (c.devices_size() != 1) {
        fail("NodePrepareResources: " + std::to_string(c.devices_size()) + " devices");
      }
      if (i >= warm) out.push_back(us);
    };
    prepare(prep_us);
    prepare(again_us);

    dra::NodeUnprepareResourcesRequest ureq;
    setClaim(ureq, uid, name);
    dra::NodeUnprepareResourcesResponse uresp;
    grpc::ClientContext uctx;
    auto t1 = Clock::now();
    grpc::Status ust = stub->NodeUnprepareResources(&uctx, ureq, &uresp);
    const double unprep = since(t1);
    if (!ust.ok()) {
      fail("NodeUnprepareResources: " + ust.error_message());
    } else if (const auto& e = uresp.claims().at(uid).error(); !e.empty()) {
      fail("NodeUnprepareResources: " + e);
    }
    if (!c.remove(std::string(kClaims) + "/" + name).ok()) fail("delete claim");
    if (i >= warm) {
      get_us.push_back(get);
      unprep_us.push_back(unprep);
    }
  }
  using rdmanet::bench::latencyStats;
  return {{"devices", devices.size()},
          {"get", latencyStats(get_us)},
          {"prepare", latencyStats(prep_us)},
          {"prepare_checkpointed", latencyStats(again_us)},
          {"unprepare", latencyStats(unprep_us)},
          {"errors", errors},
          {"first_error", first_error}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: rdmanet-dra-bench-client node|slices|prepare --server URL ...\n";
    return 1;
  }
  const std::string mode = argv[1];
  std::map<std::string, std::string> opt;
  for (int i = 2; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
  try {
    json out;
    if (mode == "node") {
      rdmanet::kube::KubeClient c(serverConfig(opt.at("--server")));
      json obj = {
          {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", opt.at("--name")}}}};
      out = must(c.create("/api/v1/nodes", obj), "create node")["metadata"];
    } else if (mode == "slices") {
      out = waitSlices(opt.at("--server"), opt.at("--node"), std::stoul(opt.at("--want")),
                       std::stoll(opt.at("--since-ns")),
                       opt.count("--timeout") ? std::stoi(opt["--timeout"]) : 120);
    } else if (mode == "prepare") {
      out = timePrepare(opt.at("--server"), opt.at("--socket"), opt.at("--node"),
                        opt.at("--driver"), opt.count("--n") ? std::stoi(opt["--n"]) : 1000);
    } else {
      std::cerr << "unknown mode " << mode << "\n";
      return 1;
    }
    std::cout << out.dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "rdmanet-dra-bench-client: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
