#include "deviceplugin/dra/slice_worker.h"

#include <malloc.h>

#include "deviceplugin/dra/slice_devices.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

using namespace std::chrono_literals;

namespace {

constexpr auto kFirstRetry = 1000ms;
constexpr auto kMaxRetry = 30000ms;

}  // namespace

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
  auto log = logger(Component::kKubelet);
  std::shared_ptr<const DeviceSnapshot> todo;  // failed last time: retried after `backoff`
  auto backoff = kFirstRetry;
  std::string last_error;
  bool taints_logged = false, multi_logged = false;
  while (true) {
    bool allow_multiple = false;
    {
      std::unique_lock lk(mu_);
      auto ready = [&] { return quit_ || pending_ != nullptr; };
      if (todo) {
        if (!clock_.waitUntil(cv_, lk, clock_.now() + backoff, ready)) {
          backoff = std::min(backoff * 2, kMaxRetry);
        }
      } else {
        clock_.waitUntil(cv_, lk, Clock::time_point::max(), ready);
      }
      if (quit_) return;
      if (pending_) {
        todo = std::move(pending_);
        backoff = kFirstRetry;
      }
      allow_multiple = allow_multiple_;
    }
    int skipped = 0;
    auto devices = sliceDevices(sysfs_, *todo, allow_multiple, &skipped);
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
    if (quit_) return;  // a publish cancelled by the destructor: nothing to retry or report
    if (!r.ok()) {
      ++status_.failures;
      std::string msg = r.error().msg;
      if (msg != last_error) log->error("ResourceSlices: {}; retrying", msg);
      last_error = std::move(msg);
      continue;
    }
    if (!last_error.empty()) log->info("ResourceSlices: published again");
    last_error.clear();
    if (r->changed) {
      log->info("ResourceSlices: {} devices in {} slice(s), generation {}", published, r->slices,
                r->generation);
    }
    status_.published_version = todo->version;
    status_.generation = r->generation;
    status_.taints_dropped = publisher_.taintsDropped();
    status_.multiple_allocations_dropped = publisher_.multipleAllocationsDropped();
    if (status_.taints_dropped && !taints_logged) {
      taints_logged = true;
      log->warn(
          "the API server drops device taints: unhealthy devices stay schedulable until "
          "its {} feature gate is on",
          dra::kDeviceTaintsGate);
    }
    if (status_.multiple_allocations_dropped && !multi_logged) {
      multi_logged = true;
      log->warn(
          "the API server drops allowMultipleAllocations: shared pools need its {} "
          "feature gate",
          dra::kConsumableCapacityGate);
    }
    todo.reset();
  }
}

}  // namespace rdmanet::dp
