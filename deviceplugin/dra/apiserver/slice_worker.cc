#include "deviceplugin/dra/apiserver/slice_worker.h"

#include <malloc.h>

#include <optional>

#include "deviceplugin/dra/apiserver/slice_devices.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

SliceWorker::SliceWorker(kube::KubeClient& client, dra::PublisherOptions options,
                         std::filesystem::path sysfs_root, const Clock& clock)
    : client_(client),
      node_name_(options.node_name),
      publisher_(client, std::move(options)),
      sysfs_(std::move(sysfs_root)),
      clock_(clock),
      worker_(
          clock, [this](const std::atomic<bool>& quit) { return runOnce(quit); }, std::nullopt,
          [](std::string_view what) {
            logger(Component::kKubelet)->error("ResourceSlices: a publish threw: {}", what);
          }) {}

SliceWorker::~SliceWorker() {
  worker_.requestStop();
  // A publish in flight would otherwise run to the end of its requests' time-outs and retries.
  client_.cancel();
  // worker_, the last member, is destroyed first: it waits for the thread.
}

void SliceWorker::publish(std::shared_ptr<const DeviceSnapshot> snap,
                          bool allow_multiple_allocations) {
  {
    std::lock_guard lk(mu_);
    pending_ = std::move(snap);
    allow_multiple_ = allow_multiple_allocations;
  }
  worker_.wake();
}

SliceWorkerStatus SliceWorker::status() const {
  std::lock_guard lk(mu_);
  return status_;
}

std::optional<Clock::time_point> SliceWorker::runOnce(const std::atomic<bool>& quit) {
  {
    std::lock_guard lk(mu_);
    if (pending_) {
      latest_ = std::move(pending_);
      latest_allow_multiple_ = allow_multiple_;
    }
  }
  if (!latest_) return std::nullopt;  // nothing handed over yet
  if (attempt(*latest_, latest_allow_multiple_, quit)) {
    backoff_ = kFirstRetry;
    return clock_.now() + kResync;
  }
  if (quit) return std::nullopt;  // the thread ends: no clock reads past this point
  const auto next = clock_.now() + backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxRetry);
  return next;
}

bool SliceWorker::attempt(const DeviceSnapshot& snap, bool allow_multiple,
                          const std::atomic<bool>& quit) {
  auto log = logger(Component::kKubelet);
  int skipped = 0;
  auto content = sliceDevices(sysfs_, snap, allow_multiple, &skipped);
  if (skipped > 0) log->warn("ResourceSlices: {} device(s) left out (gone from sysfs)", skipped);
  auto r = publisher_.publish(content.devices, content.counter_sets);
  const size_t published = content.devices.size();
  content = {};
  // A publish builds every device's JSON, the server's list and answers on this thread: a few
  // MB freed at once into this thread's arena, which glibc does not hand back by itself (only
  // the main heap's top is trimmed). Return it, or it stays resident until the next publish.
  malloc_trim(0);
  // The node's rails follow a successful publish. Outside mu_: its requests must never hold up
  // the daemon loop's hand-over in publish().
  if (r.ok() && !quit) syncRails(snap);
  std::lock_guard lk(mu_);
  ++status_.attempts;
  if (quit) return false;  // a publish cancelled by the destructor: nothing to report
  if (!r.ok()) {
    ++status_.failures;
    std::string msg = r.error().msg;
    if (msg != last_error_) log->error("ResourceSlices: {}; retrying", msg);
    last_error_ = std::move(msg);
    return false;
  }
  if (!last_error_.empty()) log->info("ResourceSlices: published again");
  last_error_.clear();
  if (r->changed) {
    log->info("ResourceSlices: {} devices in {} slice(s), generation {}", published, r->slices,
              r->generation);
  }
  status_.published_version = snap.version;
  status_.generation = r->generation;
  status_.taints_dropped = publisher_.taintsDropped();
  status_.multiple_allocations_dropped = publisher_.multipleAllocationsDropped();
  status_.partitions_dropped = publisher_.partitionsDropped();
  if (status_.taints_dropped && !taints_logged_) {
    taints_logged_ = true;
    log->warn(
        "the API server drops device taints: unhealthy devices stay schedulable until "
        "its {} feature gate is on",
        dra::kDeviceTaintsGate);
  }
  if (status_.multiple_allocations_dropped && !multi_logged_) {
    multi_logged_ = true;
    log->warn(
        "the API server drops allowMultipleAllocations: shared pools need its {} "
        "feature gate",
        dra::kConsumableCapacityGate);
  }
  if (status_.partitions_dropped && !partitions_logged_) {
    partitions_logged_ = true;
    log->warn(
        "the API server drops counter sets: VFs are published as plain devices and the "
        "scheduler does not count their bandwidth until its {} feature gate is on (the CNI still "
        "caps each VF at its pool's vfBandwidthMbps)",
        dra::kPartitionableDevicesGate);
  }
  return true;
}

void SliceWorker::syncRails(const DeviceSnapshot& snap) {
  RailSummary rails = railSummary(snap);
  if (rails_written_ == rails) return;
  auto log = logger(Component::kKubelet);
  if (auto st = writeNodeRails(client_, node_name_, rails); !st.ok()) {
    if (st.error().msg != rails_error_) log->warn("node rails: {}", st.error().msg);
    rails_error_ = st.error().msg;
    return;
  }
  log->info("node {}: {} rail(s) on its labels", node_name_, rails.size());
  rails_error_.clear();
  rails_written_ = std::move(rails);
}

}  // namespace rdmanet::dp
