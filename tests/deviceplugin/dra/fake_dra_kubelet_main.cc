// rdmanet-fake-dra-kubelet: FakeDraKubelet (fake_dra_kubelet.h) as a command, for guest scripts
// (tests/vm/dra.sh). Each run is kubelet coming up: it scans <kubelet-dir>/plugins_registry,
// registers the driver it finds there (GetInfo, validation, NotifyRegistrationStatus) and then
// makes one call on the driver's DRA endpoint, as kubelet does for a pod's claims.
//   rdmanet-fake-dra-kubelet --kubelet-dir D [--timeout-ms T] register
//   rdmanet-fake-dra-kubelet --kubelet-dir D [--timeout-ms T] prepare|unprepare NS UID NAME
// Output: one JSON object on stdout ({"plugin","endpoint","versions"} for register; for the
// calls, the response in proto3 JSON's shape with the proto's field names: {"claims": {UID:
// {"devices": [{"request_names", "pool_name", "device_name", "cdi_device_ids", "share_id"?}],
// "error"}}}, every field written, share_id only when set). Exit 0 on success, 1 when the call
// failed or a claim came back with an error, 2 for bad usage or no registration within the
// time-out.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/deviceplugin/dra/fake_dra_kubelet.h"

namespace {

using rdmanet::dp::testing::Claim;
using rdmanet::dp::testing::FakeDraKubelet;

int usage() {
  std::cerr << "usage: rdmanet-fake-dra-kubelet --kubelet-dir D [--timeout-ms T] "
               "register | prepare NS UID NAME | unprepare NS UID NAME\n";
  return 2;
}

namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;

// The protos are built for the lite runtime, which has no JSON printer: the fields by hand.
nlohmann::json toJson(const dra::Device& d) {
  nlohmann::json j{{"request_names", d.request_names()},
                   {"pool_name", d.pool_name()},
                   {"device_name", d.device_name()},
                   {"cdi_device_ids", d.cdi_device_ids()}};
  if (d.has_share_id()) j["share_id"] = d.share_id();
  return j;
}
nlohmann::json toJson(const dra::NodePrepareResourceResponse& c) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : c.devices()) devices.push_back(toJson(d));
  return {{"devices", devices}, {"error", c.error()}};
}
nlohmann::json toJson(const dra::NodeUnprepareResourceResponse& c) {
  return {{"error", c.error()}};
}

template <typename Resp>
int print(const std::optional<Resp>& resp, const FakeDraKubelet& k) {
  if (!resp) {
    std::cerr << "rdmanet-fake-dra-kubelet: " << k.lastError() << "\n";
    return 1;
  }
  nlohmann::json claims = nlohmann::json::object();
  for (const auto& [uid, c] : resp->claims()) claims[uid] = toJson(c);
  std::cout << nlohmann::json{{"claims", claims}}.dump() << std::endl;
  for (const auto& [uid, c] : resp->claims()) {
    if (!c.error().empty()) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string dir;
  long timeout_ms = 30000;
  size_t i = 0;
  for (; i + 1 < args.size() && args[i].rfind("--", 0) == 0; i += 2) {
    if (args[i] == "--kubelet-dir") {
      dir = args[i + 1];
    } else if (args[i] == "--timeout-ms") {
      timeout_ms = std::stol(args[i + 1]);
    } else {
      return usage();
    }
  }
  if (dir.empty() || i >= args.size()) return usage();
  const std::string cmd = args[i];
  const bool call = cmd == "prepare" || cmd == "unprepare";
  if (!(cmd == "register" || (call && args.size() == i + 4))) return usage();

  FakeDraKubelet k(dir);
  if (!k.start() || !k.waitRegistrations(1, std::chrono::milliseconds(timeout_ms))) {
    std::cerr << "rdmanet-fake-dra-kubelet: no driver registered under " << dir << " within "
              << timeout_ms << " ms (" << k.refusals() << " refused)\n";
    return 2;
  }
  if (cmd == "register") {
    std::cout << nlohmann::json{{"plugin", k.pluginName()},
                                {"endpoint", k.endpoint()},
                                {"versions", k.versions()}}
                     .dump()
              << std::endl;
    return 0;
  }
  const std::vector<Claim> claims = {{args[i + 1], args[i + 2], args[i + 3]}};
  return cmd == "prepare" ? print(k.prepare(claims), k) : print(k.unprepare(claims), k);
}
