// rdmanet-dp-bench-client: timing probes for bench/dp_bench.sh, speaking the device plugin API
// directly (no kubelet in the measured path).
//   allocate --socket S --id ID [--n N]      N Allocate calls for one device: latency stats
//   bare --socket S [--n N]                  the same calls against a do-nothing DevicePlugin
//                                            server (own process) on unix socket S: the floor
//   linkdown --socket S --root R --netdev IF [--device-of IF2] [--rounds K]
//                                            flips IF's simulated link (the switch-side veth in
//                                            the simnode namespace) and times until the
//                                            ListAndWatch stream shows the new health of IF2's
//                                            device (default IF's). A VF's health follows its
//                                            PF's link, not its own netdev's (a free VF is down),
//                                            so the bench flips a PF and watches one of its VFs.
//                                            The stream is bounded at 30 s per expected
//                                            change; past it, exit 2 naming what did not change.
// Output: one JSON object on stdout.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "proto/api.grpc.pb.h"
#include "tests/deviceplugin/bench/latency_stats.h"
#include "tests/fakes/eventually.h"

namespace {

namespace pb = ::v1beta1;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

json timeAllocate(const std::string& socket, const std::string& id, int n) {
  auto ch = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto stub = pb::DevicePlugin::NewStub(ch);
  std::vector<double> us;
  int errors = 0;
  for (int i = 0; i < n + 100; ++i) {  // the first 100 warm the channel up and are not counted
    pb::AllocateRequest req;
    req.add_container_requests()->add_devices_ids(id);
    pb::AllocateResponse resp;
    grpc::ClientContext ctx;
    auto t0 = Clock::now();
    grpc::Status st = stub->Allocate(&ctx, req, &resp);
    auto t1 = Clock::now();
    if (!st.ok()) ++errors;
    if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  json j = rdmanet::bench::latencyStats(us);
  j["errors"] = errors;
  return j;
}

class BareService final : public pb::DevicePlugin::Service {
  grpc::Status Allocate(grpc::ServerContext*, const pb::AllocateRequest*,
                        pb::AllocateResponse* out) override {
    out->add_container_responses();
    return grpc::Status::OK;
  }
};

int run(const std::vector<std::string>& cmd) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

json timeLinkDown(const std::string& socket, const std::string& root, const std::string& netdev,
                  const std::string& watched, int rounds) {
  std::ifstream in(root + "/manifest.json");
  json m = json::parse(in);
  std::string peer, pci;
  for (const auto& l : m["links"]) {
    if (l["name"] == netdev) peer = l["peer"];
    if (l["name"] == watched) pci = l["pci"];
  }
  if (peer.empty()) throw std::runtime_error("no simnode link " + netdev);
  if (pci.empty()) throw std::runtime_error("no simnode link " + watched);
  std::string ns = m["netns"];

  auto ch = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto stub = pb::DevicePlugin::NewStub(ch);
  grpc::ClientContext ctx;
  // A bound on the whole stream, so a change that never shows fails the bench instead of
  // hanging it: 30 s per expected change.
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30 * (2 * rounds + 1)));
  auto reader = stub->ListAndWatch(&ctx, pb::Empty());
  pb::ListAndWatchResponse resp;
  auto healthOf = [&]() -> std::string {
    for (const auto& d : resp.devices()) {
      if (d.id() == pci) return d.health();
    }
    return "";
  };
  if (!reader->Read(&resp)) throw std::runtime_error("no initial device list");
  std::vector<double> down_ms, up_ms;
  for (int r = 0; r < rounds; ++r) {
    for (bool up : {false, true}) {
      auto t0 = Clock::now();
      if (run({"ip", "-n", ns, "link", "set", peer, up ? "up" : "down"}) != 0) {
        throw std::runtime_error("ip link set failed");
      }
      std::string want = up ? "Healthy" : "Unhealthy";
      while (healthOf() != want) {
        if (!reader->Read(&resp)) {
          throw std::runtime_error(fmt::format(
              "{} ({}) did not turn {} after {} went {}: the stream ended ({})", pci, watched, want,
              netdev, up ? "up" : "down", reader->Finish().error_message()));
        }
      }
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      (up ? up_ms : down_ms).push_back(ms);
    }
  }
  ctx.TryCancel();
  auto summary = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return json{{"n", v.size()}, {"median_ms", v[v.size() / 2]}, {"max_ms", v.back()}};
  };
  return {{"device", pci}, {"netdev", netdev}, {"down", summary(down_ms)}, {"up", summary(up_ms)}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: rdmanet-dp-bench-client allocate|bare|linkdown --socket S ...\n";
    return 1;
  }
  std::string mode = argv[1];
  std::map<std::string, std::string> opt;
  for (int i = 2; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
  int n = opt.count("--n") ? std::stoi(opt["--n"]) : 3000;
  try {
    json out;
    if (mode == "allocate") {
      out = timeAllocate(opt.at("--socket"), opt.at("--id"), n);
    } else if (mode == "bare") {
      // The server runs in its own process, like the plugin: the comparison must include the
      // same cross-process wake-ups, not just gRPC's encoding.
      std::string sock = opt.at("--socket");
      unlink(sock.c_str());
      pid_t child = fork();
      if (child == 0) {
        BareService svc;
        grpc::ServerBuilder b;
        b.AddListeningPort("unix:" + sock, grpc::InsecureServerCredentials());
        b.RegisterService(&svc);
        auto server = b.BuildAndStart();
        server->Wait();
        _exit(0);
      }
      (void)rdmanet::testing::eventually([&] { return access(sock.c_str(), F_OK) == 0; },
                                         std::chrono::seconds(5), std::chrono::milliseconds(10));
      out = timeAllocate(sock, "x", n);
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    } else if (mode == "linkdown") {
      const std::string netdev = opt.at("--netdev");
      out = timeLinkDown(opt.at("--socket"), opt.at("--root"), netdev,
                         opt.count("--device-of") ? opt["--device-of"] : netdev,
                         opt.count("--rounds") ? std::stoi(opt["--rounds"]) : 5);
    } else {
      std::cerr << "unknown mode " << mode << "\n";
      return 1;
    }
    std::cout << out.dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "rdmanet-dp-bench-client: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
