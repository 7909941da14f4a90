#pragma once
// The daemon loop in process with the DRA front: the real core over a simulated node, the real
// DraFront with its gRPC servers, the stand-in kubelet (FakeDraKubelet) and the product's REST
// client for ResourceClaims, on a FakeClock. Timers fire when a test advances the clock; the only
// real-time waits are gRPC round trips, polled turn by turn with a deadline.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/kube/client.h"
#include "deviceplugin/daemon/daemon.h"
#include "deviceplugin/dra/apiserver/kube_claim_reader.h"
#include "deviceplugin/dra/apiserver/kube_claim_status_writer.h"
#include "deviceplugin/dra/dra_front.h"
#include "tests/deviceplugin/dra/fake_dra_kubelet.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp::testing {

inline constexpr const char* kNode = "node-a";

// Plain HTTP, no authentication: the stand-in API server on loopback.
inline kube::KubeConfig serverConfig(const std::string& url) {
  kube::KubeConfig c;
  c.server = url;
  return c;
}

class DraDaemonFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    kubelet_dir_ = makeTempDir("dra-kubelet");
    cdi_dir_ = makeTempDir("dra-cdi");
    kubelet_ = std::make_unique<FakeDraKubelet>(kubelet_dir_);
    ASSERT_TRUE(kubelet_->start());
  }
  void TearDown() override {
    kubelet_->stop();
    stopDaemon();
    std::filesystem::remove_all(kubelet_dir_);
    std::filesystem::remove_all(cdi_dir_);
  }

  // `api_server`: where claims are read ("" when the test prepares nothing).
  void startDaemon(const std::string& api_server = "http://127.0.0.1:1",
                   DevicePublisher* publisher = nullptr) {
    // On the front's clock, as in the daemon (dra_wiring.cc): kubelet's deadline, which the
    // front takes onto its clock, bounds the reads.
    client_ = std::make_unique<kube::KubeClient>(serverConfig(api_server),
                                                 kube::ClientOptions{.clock = &clock_});
    reader_ = std::make_unique<KubeClaimReader>(*client_);
    if (with_claim_status_) {
      // Its deadlines are on the front's clock, as in the daemon (dra_wiring.cc).
      status_client_ = std::make_unique<kube::KubeClient>(serverConfig(api_server),
                                                          kube::ClientOptions{.clock = &clock_});
      status_writer_ = std::make_unique<KubeClaimStatusWriter>(
          *status_client_, "rdma.rdmanet.io", [] { return std::string(kWallNow); });
    }
    front_ = std::make_unique<DraFront>(DraFrontOptions{.kubelet_dir = kubelet_dir_,
                                                        .node = kNode,
                                                        .cdi_dir = cdi_dir_,
                                                        .pod_devices_dir = podDevicesDir()},
                                        DraFrontDeps{.clock = &clock_,
                                                     .claims = reader_.get(),
                                                     .publisher = publisher,
                                                     .metrics = &metrics_,
                                                     .events = events_,
                                                     .claim_status = status_writer_.get()});
    daemon_ = std::make_unique<Daemon>(
        DaemonOptions{.sysfs_root = node_.root(), .handle_signals = false, .uevents = false},
        config_, DaemonDeps{.clock = &clock_, .front = front_.get()});
    ASSERT_TRUE(daemon_->start().ok());
  }
  void stopDaemon() {
    if (front_) front_->stop();
    daemon_.reset();
    front_.reset();
  }

  // Where prepare records each pod's claimed devices (dra/kubelet/pod_devices.h).
  std::filesystem::path podDevicesDir() const { return kubelet_dir_ / "dra-devices"; }

  // Turns the loop until `pred` holds; false after 10 s of real time.
  bool turnUntil(const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      daemon_->runOnce(std::chrono::milliseconds(5));
    }
    return pred();
  }
  void settle() {
    for (int i = 0; i < 20; ++i) daemon_->runOnce(std::chrono::milliseconds(5));
  }
  void startRegistered(const std::string& api_server = "http://127.0.0.1:1") {
    startDaemon(api_server);
    ASSERT_TRUE(turnUntil([&] { return front_->ready(); }))
        << "registrations " << kubelet_->registrations();
  }

  TestNode node_;
  PluginConfig config_ = defaultConfig();  // the daemon's pools; set before startDaemon()
  rdmanet::testing::FakeClock clock_;
  Metrics metrics_;              // the front's series (/metrics)
  EventSink* events_ = nullptr;  // set before startDaemon() to record Events
  std::filesystem::path kubelet_dir_, cdi_dir_;
  std::unique_ptr<FakeDraKubelet> kubelet_;
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<KubeClaimReader> reader_;
  // Set before startDaemon(): the front writes the CNI's network reports into claims' status
  // (claim_network_sync.h), its wall clock stopped at kWallNow.
  bool with_claim_status_ = false;
  static constexpr const char* kWallNow = "2026-12-06T12:00:00Z";
  std::unique_ptr<kube::KubeClient> status_client_;
  std::unique_ptr<KubeClaimStatusWriter> status_writer_;
  std::unique_ptr<DraFront> front_;
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace rdmanet::dp::testing
