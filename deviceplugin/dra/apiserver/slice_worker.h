#pragma once
// SliceWorker: the DRA front's DevicePublisher. It keeps this node's ResourceSlices of this
// driver exactly equal to the latest device snapshot, through dra::SlicePublisher (which
// reconciles against the API server: it re-reads on a conflict, and deletes every slice of this
// driver and node outside the current pool, other runs' leftovers included), on its own thread:
// the daemon loop only hands over the newest snapshot and never waits for the API server.
//
// - Only the newest snapshot matters: snapshots handed over while a publish runs replace each
//   other, and the next publish takes the last one, at once.
// - A failed publish (API server away, 5xx, time-out, conflicts that did not settle) is tried
//   again after 250 ms, doubling to at most 1 s, and the wait starts over after a success. The
//   cap is what bounds convergence: the slices are exact within about a second (plus one
//   publish) of the API server answering normally again, and a pool left at mixed generations
//   by a publish that failed half-way is repaired as soon. Each distinct failure is logged once.
// - Every 30 s after a success the last snapshot is published again: one list when nothing
//   changed, and a repair when someone else wrote or deleted a slice of ours meanwhile (a
//   previous run still shutting down, an admin). Without a watch, that is how long such a
//   foreign change can stand.
// - When the API server drops device taints (DRADeviceTaints off) or allowMultipleAllocations
//   (DRAConsumableCapacity off), that is logged once, naming the gate.
// - After a publish, the node's rail labels and annotation follow the snapshot (node_rails.h).
// - It runs on a Worker (common/os/worker.h). Retries and resyncs wait on the injected clock, and
//   so do the client's own backoffs when it was given the same clock; tests advance a FakeClock.
// - Destruction is bounded: it cancels the client, which ends a publish in flight (its request
//   and its retries) within about a second, and leaves the slices as the server has them.

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/base/clock.h"
#include "common/base/sysfs.h"
#include "common/kube/client.h"
#include "common/os/worker.h"
#include "deviceplugin/dra/apiserver/node_rails.h"
#include "deviceplugin/dra/apiserver/slice_publisher.h"
#include "deviceplugin/dra/device_publisher.h"

namespace rdmanet::dp {

struct SliceWorkerStatus {
  uint64_t published_version = 0;  // the snapshot version last published successfully
  int64_t generation = 0;          // the pool's generation after it
  int attempts = 0;                // publishes tried so far (retries and resyncs included)
  int failures = 0;                // failed publishes so far
  bool taints_dropped = false;
  bool multiple_allocations_dropped = false;
  bool partitions_dropped = false;
};

class SliceWorker final : public DevicePublisher {
 public:
  static constexpr std::chrono::milliseconds kFirstRetry{250};
  static constexpr std::chrono::milliseconds kMaxRetry{1000};
  static constexpr std::chrono::seconds kResync{30};

  // `client` must outlive the worker and serve it alone: the destructor cancels it. `sysfs_root`
  // is read for the standard attributes. `clock` (outliving the worker) times retries and resyncs.
  SliceWorker(kube::KubeClient& client, dra::PublisherOptions options,
              std::filesystem::path sysfs_root, const Clock& clock);
  ~SliceWorker() override;

  void publish(std::shared_ptr<const DeviceSnapshot> snap,
               bool allow_multiple_allocations) override;
  SliceWorkerStatus status() const;

 private:
  // The worker's job: publishes the newest snapshot; returns when to publish it again.
  std::optional<Clock::time_point> runOnce(const std::atomic<bool>& quit);
  // One publish of `snap`: logs what an operator needs, updates status_. True on success.
  bool attempt(const DeviceSnapshot& snap, bool allow_multiple, const std::atomic<bool>& quit);
  // Writes the node's rail labels when they changed (node_rails.h). A failure does not fail the
  // publish: it is logged once and tried again on the next publish or resync. The worker
  // thread's own: called without mu_.
  void syncRails(const DeviceSnapshot& snap);

  kube::KubeClient& client_;
  std::string node_name_;
  dra::SlicePublisher publisher_;
  Sysfs sysfs_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::shared_ptr<const DeviceSnapshot> pending_;  // guarded by mu_, like the two below
  bool allow_multiple_ = false;
  SliceWorkerStatus status_;
  // The worker thread's own (no lock): the snapshot published last and the retry schedule.
  std::shared_ptr<const DeviceSnapshot> latest_;
  bool latest_allow_multiple_ = false;
  std::chrono::milliseconds backoff_ = kFirstRetry;
  // Also the thread's own: what attempt() logged last.
  std::string last_error_;
  bool taints_logged_ = false, multi_logged_ = false, partitions_logged_ = false;
  // The node's rails as last written (node_rails.h), nullopt until a write succeeded; and why the
  // last write failed, logged once.
  std::optional<RailSummary> rails_written_;
  std::string rails_error_;
  Worker worker_;  // last: its thread may start on the members above at once
};

}  // namespace rdmanet::dp
