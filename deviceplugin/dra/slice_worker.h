#pragma once
// SliceWorker: the DRA front's DevicePublisher. It keeps the node's ResourceSlices equal to the
// latest device snapshot, through dra::SlicePublisher (which reconciles against the API server),
// on its own thread: the daemon loop only hands over the newest snapshot and never waits for
// the API server.
//
// - Only the newest snapshot matters: snapshots handed over while a publish runs replace each
//   other, and the next publish takes the last one.
// - A failed publish (API server away, 5xx, time-out) is tried again after 1 s, doubling to
//   30 s, until one succeeds or a newer snapshot arrives (which is tried at once). Each distinct
//   failure is logged once.
// - When the API server drops device taints (DRADeviceTaints off) or allowMultipleAllocations
//   (DRAConsumableCapacity off), that is logged once, naming the gate.
// - Retries wait on the injected clock; tests advance a FakeClock.
// - Destruction is bounded: it cancels the client, which ends a publish in flight (its request
//   and its retries) within about a second, and leaves the slices as the server has them.

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "common/base/clock.h"
#include "common/base/sysfs.h"
#include "common/kube/client.h"
#include "deviceplugin/dra/dra_front.h"
#include "deviceplugin/dra/slice_publisher.h"

namespace rdmanet::dp {

struct SliceWorkerStatus {
  uint64_t published_version = 0;  // the snapshot version last published successfully
  int64_t generation = 0;          // the pool's generation after it
  int attempts = 0;                // publishes tried so far (retries included)
  int failures = 0;                // failed publishes so far
  bool taints_dropped = false;
  bool multiple_allocations_dropped = false;
};

class SliceWorker final : public DevicePublisher {
 public:
  // `client` must outlive the worker and serve it alone: the destructor cancels it. `sysfs_root`
  // is read for the standard attributes. `clock` (outliving the worker) times the retries.
  SliceWorker(kube::KubeClient& client, dra::PublisherOptions options,
              std::filesystem::path sysfs_root, const Clock& clock);
  ~SliceWorker() override;

  void publish(std::shared_ptr<const DeviceSnapshot> snap,
               bool allow_multiple_allocations) override;
  SliceWorkerStatus status() const;

 private:
  void loop();

  kube::KubeClient& client_;
  dra::SlicePublisher publisher_;
  Sysfs sysfs_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const DeviceSnapshot> pending_;
  bool allow_multiple_ = false;
  bool quit_ = false;
  SliceWorkerStatus status_;
  std::thread thread_;
};

}  // namespace rdmanet::dp
