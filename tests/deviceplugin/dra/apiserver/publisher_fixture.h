#pragma once
// Shared set-up of the publisher tests: a stand-in API server with the Node, a client whose
// retry waits are not slept, and helpers to build inventories and read the slices back.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/kube/client.h"
#include "deviceplugin/dra/apiserver/slice_publisher.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/fakes/stepping_clock.h"

namespace rdmanet::dra {

class PublisherTest : public ::testing::Test {
 protected:
  static constexpr const char* kNode = "node-1";

  void SetUp() override {
    if (!server_.ok()) GTEST_SKIP() << server_.error();
    node_uid_ = server_.createNode(kNode);
    ASSERT_FALSE(node_uid_.empty());
  }

  kube::KubeClient& client() {
    if (!client_) {
      client_ = std::make_unique<kube::KubeClient>(
          server_.config(), kube::ClientOptions{.request_timeout = std::chrono::milliseconds(1000),
                                                .retry = {.max_attempts = 2},
                                                .clock = &stepping_});
    }
    return *client_;
  }
  SlicePublisher publisher() {
    return SlicePublisher(client(), {.driver = "rdma.rdmanet.io", .node_name = kNode});
  }

  // n VF devices with a few attributes each, named after their PCI addresses.
  static std::vector<DraDevice> inventory(int n) {
    std::vector<DraDevice> out;
    for (int i = 0; i < n; ++i) {
      const PciAddress a{.domain = 0,
                         .bus = static_cast<uint8_t>(0x81 + i / 256),
                         .device = static_cast<uint8_t>((i / 8) % 32),
                         .function = static_cast<uint8_t>(i % 8)};
      DraDevice d{.name = pciDeviceName(a)};
      d.attributes[std::string(kAttrPciBusId)] = a.str();
      d.attributes[std::string(kAttrPcieRoot)] = std::string("pci0000:80");
      d.attributes[std::string(kAttrNumaNode)] = int64_t{0};
      d.attributes["rdmanet.io/vfIndex"] = int64_t{i};
      out.push_back(std::move(d));
    }
    return out;
  }

  // The node's slices as the server holds them, sorted by name.
  std::vector<nlohmann::json> slices() {
    auto list = client().list(kResourceSlicesPath, {.field_selector = "spec.nodeName=node-1"});
    EXPECT_TRUE(list.ok()) << (list.ok() ? "" : list.error().msg);
    std::vector<nlohmann::json> out;
    if (list.ok()) {
      for (auto s : (*list)["items"]) {
        s["apiVersion"] = "resource.k8s.io/v1";  // list items carry no TypeMeta
        s["kind"] = "ResourceSlice";
        out.push_back(std::move(s));
      }
    }
    return out;
  }
  // Every device name across the slices; fails the test on a duplicate.
  std::set<std::string> publishedDevices() {
    std::set<std::string> names;
    for (const auto& s : slices()) {
      // A slice of counter sets (KEP-4815) holds no devices.
      for (const auto& d : s["spec"].value("devices", nlohmann::json::array())) {
        EXPECT_TRUE(names.insert(d["name"].get<std::string>()).second) << d["name"];
      }
    }
    return names;
  }
  static std::set<std::string> names(const std::vector<DraDevice>& devices) {
    std::set<std::string> out;
    for (const auto& d : devices) out.insert(d.name);
    return out;
  }
  // Every slice carries `generation` and the right count.
  void expectPool(int64_t generation) {
    const auto all = slices();
    for (const auto& s : all) {
      EXPECT_EQ(s["spec"]["pool"]["name"], kNode);
      EXPECT_EQ(s["spec"]["pool"]["generation"], generation);
      EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], static_cast<int64_t>(all.size()));
    }
  }
  std::set<std::string> sliceNames() {
    std::set<std::string> out;
    for (const auto& s : slices()) out.insert(s["metadata"]["name"].get<std::string>());
    return out;
  }
  int writes() { return server_.stats().value("writes", -1); }

  testing::FakeApiServer server_;
  std::string node_uid_;
  rdmanet::testing::SteppingClock stepping_;  // the client's retries: not slept
  std::unique_ptr<kube::KubeClient> client_;
};

}  // namespace rdmanet::dra
