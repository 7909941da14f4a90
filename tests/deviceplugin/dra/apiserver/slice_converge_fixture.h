#pragma once
// The SliceWorker alone against the stand-in API server, on a FakeClock: snapshots of the
// scaling node's VFs are handed to it as the DRA front would, and the test moves time in small
// steps, waiting after each until the worker sleeps again (FakeClock::idle). So "the slices are
// exact within 2 s" is checked on the clock the worker backs off on, deterministically, and the
// real time the converging publish took is logged beside it.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/kube/client.h"
#include "deviceplugin/dra/apiserver/slice_worker.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/stepping_clock.h"

namespace rdmanet::dp {

class SliceConvergeTest : public ::testing::Test {
 protected:
  static constexpr const char* kNode = "node-c";
  static constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";
  // The worker's client's User-Agent: faults aimed at it (FakeApiServer::fail) spare the test's.
  static constexpr const char* kWorkerAgent = "rdmanet-slice-worker";

  void SetUp() override;
  void TearDown() override;

  // The scaling node's first `vfs` VFs (of 72) and its pools, at the next version.
  std::shared_ptr<const DeviceSnapshot> snapshot(int vfs);
  // Hands `snap` to the worker, as the front does after a change, and waits until the worker
  // has tried it and sleeps again.
  void hand(std::shared_ptr<const DeviceSnapshot> snap);
  // Moves the clock on by `d` in steps of `step`, letting the worker run what falls due after
  // each. False (and a test failure) when the worker did not go back to sleep.
  bool advance(std::chrono::milliseconds d,
               std::chrono::milliseconds step = std::chrono::milliseconds(100));
  // Steps the clock 100 ms at a time until the slices are exact(); how much clock time that
  // took, or nothing when they were not exact after `limit`.
  std::optional<std::chrono::milliseconds> stepUntilExact(
      const DeviceSnapshot& snap, std::chrono::milliseconds limit = std::chrono::seconds(60));

  // Every ResourceSlice of this driver on this node, as the server holds them.
  nlohmann::json slices();
  // "" when this driver's slices on this node are exactly `snap`: one pool named after the node,
  // every slice at one generation with the right resourceSliceCount, each device once, nothing
  // else. Otherwise what differs.
  std::string inexact(const DeviceSnapshot& snap);
  bool exact(const DeviceSnapshot& snap) { return inexact(snap).empty(); }
  // The generations present in the node's pool.
  std::set<int64_t> generations();
  // Writes a slice of this driver and node with `devices` in pool `pool` at `generation`, as
  // another run (or another writer) would.
  void writeForeignSlice(const std::string& pool, int devices, int64_t generation);

  rdmanet::testing::FakeApiServer api_;
  std::string node_uid_;
  rdmanet::testing::FakeClock clock_;
  rdmanet::testing::SteppingClock client_clock_;     // the worker's client's retries
  std::unique_ptr<kube::KubeClient> worker_client_;  // the worker's: it cancels it
  std::unique_ptr<kube::KubeClient> client_;         // the test's own reads and writes
  std::unique_ptr<SliceWorker> worker_;
  uint64_t version_ = 0;
};

}  // namespace rdmanet::dp
