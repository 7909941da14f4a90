#pragma once
// DraPrepareTest: the DRA front in the daemon loop (DraDaemonFixture) reading ResourceClaims from
// the stand-in API server (one Node.js process per test suite), with helpers to create allocated
// claims and to read what prepare wrote.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "common/kube/config.h"
#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "deviceplugin/dra/kubelet/device_metadata.h"
#include "tests/deviceplugin/dra/dra_fixture.h"
#include "tests/fakes/fake_apiserver.h"

namespace rdmanet::dp::testing {

namespace fs = std::filesystem;
using nlohmann::json;

inline constexpr const char* kDriver = "rdma.rdmanet.io";

inline nlohmann::json readJson(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str(), nullptr, false);
}

// The CDI spec files prepare writes for claims `uids` of one request `request` each: the claim's
// own and its request's device metadata's (the front's default, dra/kubelet/device_metadata.h).
inline std::set<std::string> specsOf(const std::set<std::string>& uids,
                                     const std::string& request = "nic") {
  std::set<std::string> out;
  for (const auto& uid : uids) {
    out.insert(claimSpecFileName(uid));
    out.insert(metadataSpecFileName(kDriver, uid, request));
  }
  return out;
}
// The CDI ID of a request's device metadata, which its first device carries.
inline std::string metadataCdiId(const std::string& uid, const std::string& request = "nic") {
  return std::string(kDriver) + "/metadata=" + uid + "_" + request;
}

// Every file under `dir` (recursively), relative.
inline std::set<std::string> filesUnder(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_directory()) out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

class DraPrepareTest : public DraDaemonFixture {
 protected:
  static void SetUpTestSuite() {
    api_ = new rdmanet::testing::FakeApiServer();
    ASSERT_TRUE(api_->ok()) << api_->error();
  }
  static void TearDownTestSuite() {
    delete api_;
    api_ = nullptr;
  }

  // A reboot: /var/run (the pod device records, the CDI specs) emptied, the checkpoint kept, and
  // the daemon started again. True once the record of claim `uid` for `pod` is back.
  bool rebootUntilRecorded(const std::string& pod, const std::string& uid) {
    stopDaemon();
    fs::remove_all(podDevicesDir());
    fs::remove_all(cdi_dir_);
    startRegistered(api_->url());
    return turnUntil([&] { return fs::exists(podDevicesDir() / pod / (uid + ".json")); });
  }

  // Creates a ResourceClaim allocated as `results` says; returns its UID.
  // `requests`: the names in spec.devices.requests (the stand-in server does not check them
  // against the results, the real one does).
  // `reserved_for`: status.reservedFor, as the scheduler sets it before the pod is bound.
  std::string createClaim(const std::string& name, const json& results,
                          const std::vector<std::string>& requests = {"nic"},
                          const json& reserved_for = json::array()) {
    kube::KubeClient c(serverConfig(api_->url()));
    json reqs = json::array();
    for (const std::string& r : requests) {
      reqs.push_back({{"name", r}, {"exactly", {{"deviceClassName", "rdma-vf"}, {"count", 1}}}});
    }
    json obj = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceClaim"},
        {"metadata", {{"name", name}, {"namespace", "team"}}},
        {"spec", {{"devices", {{"requests", reqs}}}}},
        {"status",
         {{"allocation", {{"devices", {{"results", results}}}}}, {"reservedFor", reserved_for}}}};
    auto r = c.create("/apis/resource.k8s.io/v1/namespaces/team/resourceclaims", obj);
    EXPECT_TRUE(r.ok()) << r.error().msg;
    return r.ok() ? (*r)["metadata"]["uid"].get<std::string>() : "";
  }
  void deleteClaim(const std::string& name) {
    kube::KubeClient c(serverConfig(api_->url()));
    EXPECT_TRUE(c.remove("/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/" + name).ok());
  }
  static json result(const std::string& request, const std::string& device,
                     const std::string& driver = kDriver, const std::string& pool = kNode) {
    return {{"request", request}, {"driver", driver}, {"pool", pool}, {"device", device}};
  }
  // The char devices the simulated node gives a function's RDMA device (uverbs, umad, issm).
  std::set<std::string> charDevicesOf(const PciAddress& fn) const {
    std::set<std::string> out;
    for (const auto& nic : node_.inventory().nics) {
      if (nic.pci.address != fn) continue;
      for (const auto& r : nic.rdma) {
        for (const auto& c : r.char_devices) {
          if (c.dev_path != "/dev/infiniband/rdma_cm") out.insert(c.dev_path);
        }
      }
    }
    return out;
  }

  // The RDMA device (HCA) name of a function, as NCCL_IB_HCA lists it.
  std::string hcaOf(const PciAddress& fn) const {
    for (const auto& nic : node_.inventory().nics) {
      if (nic.pci.address == fn && !nic.rdma.empty()) return nic.rdma.front().name;
    }
    return "";
  }

  inline static rdmanet::testing::FakeApiServer* api_ = nullptr;
};

}  // namespace rdmanet::dp::testing
