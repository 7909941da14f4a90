#include "deviceplugin/dra/apiserver/slice_worker.h"

#include <malloc.h>

#include <optional>

#include "deviceplugin/dra/apiserver/slice_devices.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

SliceWorker::SliceWorker(kube::KubeClient& client, dra::PublisherOptions options,
                         std::filesystem::path sysfs_root, const Clock& clock)
    : client_(client),
      publisher_(client, std::move(options)),
      sysfs_(std::move(sysfs_root)),
      clock_(clock) {
  thread_ = std::thread([this] { loop(); });
}

SliceWorker::~SliceWorker() {
  {
    std::lock_guard lk(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  // A publish in flight would otherwise run to the end of its requests' time-outs and retries.
  client_.cancel();
  thread_.join();
}

void SliceWorker::publish(std::shared_ptr<const DeviceSnapshot> snap,
                          bool allow_multiple_allocations) {
  {
    std::lock_guard lk(mu_);
    pending_ = std::move(snap);
    allow_multiple_ = allow_multiple_allocations;
  }
  cv_.notify_all();
}

SliceWorkerStatus SliceWorker::status() const {
  std::lock_guard lk(mu_);
  return status_;
}

void SliceWorker::loop() {
  std::shared_ptr<const DeviceSnapshot> latest;  // the newest snapshot taken: what is published
  bool allow_multiple = false;
  std::optional<Clock::time_point> next;  // when to publish `latest` again (retry or resync)
  auto backoff = kFirstRetry;
  while (true) {
    {
      std::unique_lock lk(mu_);
      auto woken = [&] { return quit_ || pending_ != nullptr; };
      clock_.waitUntil(cv_, lk, next.value_or(Clock::time_point::max()), woken);
      if (quit_) return;
      if (pending_) {
        latest = std::move(pending_);
        allow_multiple = allow_multiple_;
      }
    }
    if (attempt(*latest, allow_multiple)) {
      backoff = kFirstRetry;
      next = clock_.now() + kResync;
    } else {
      next = clock_.now() + backoff;
      backoff = std::min(backoff * 2, kMaxRetry);
    }
  }
}

bool SliceWorker::attempt(const DeviceSnapshot& snap, bool allow_multiple) {
  auto log = logger(Component::kKubelet);
  int skipped = 0;
  auto devices = sliceDevices(sysfs_, snap, allow_multiple, &skipped);
  if (skipped > 0) log->warn("ResourceSlices: {} device(s) left out (gone from sysfs)", skipped);
  auto r = publisher_.publish(devices);
  const size_t published = devices.size();
  devices = {};
  // A publish builds every device's JSON, the server's list and answers on this thread: a few
  // MB freed at once into this thread's arena, which glibc does not hand back by itself (only
  // the main heap's top is trimmed). Return it, or it stays resident until the next publish.
  malloc_trim(0);
  std::lock_guard lk(mu_);
  ++status_.attempts;
  if (quit_) return false;  // a publish cancelled by the destructor: nothing to report
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
  return true;
}

}  // namespace rdmanet::dp
