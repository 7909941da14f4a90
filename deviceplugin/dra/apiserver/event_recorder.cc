#include "deviceplugin/dra/apiserver/event_recorder.h"

#include <fmt/format.h>
#include <time.h>

#include <nlohmann/json.hpp>

#include "common/base/clock.h"
#include "deviceplugin/dra/apiserver/api_paths.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

using nlohmann::json;

// RFC 3339 in UTC, whole seconds: metav1.Time's wire form.
std::string rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&s, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string keyOf(const EventObject& o, const std::string& reason, const std::string& message) {
  // The UID names the object across renames; kind/namespace/name where it is not known.
  return fmt::format("{}\n{}/{}/{}\n{}\n{}", o.uid, o.kind, o.ns, o.name, reason, message);
}

}  // namespace

KubeEventRecorder::KubeEventRecorder(kube::KubeClient& client, EventRecorderOptions options,
                                     const Clock& clock, Metrics* metrics)
    : client_(client),
      options_(std::move(options)),
      clock_(clock),
      metrics_(metrics),
      worker_(
          clock, [this](const std::atomic<bool>& quit) { return drain(quit); }, std::nullopt,
          [](std::string_view what) {
            logger(Component::kKubelet)->error("Events: a post threw: {}", what);
          }) {}

KubeEventRecorder::~KubeEventRecorder() {
  worker_.requestStop();
  client_.cancel();  // a POST in flight ends now, not at its time-out
  // worker_, the last member, is destroyed first: it waits for the thread.
}

void KubeEventRecorder::count(std::string_view result) {
  if (metrics_) metrics_->countEvent(result);
}

void KubeEventRecorder::warning(const EventObject& about, const std::string& reason,
                                const std::string& message) {
  const auto now = clock_.now();
  const auto wall = wallNow();
  std::unique_lock lk(mu_);
  // Forget what has not happened for two windows (the failure stopped): the map holds only the
  // Events of the last two. One window would lose the repeats folded late in it whenever the
  // next try comes a little more than a window later (kubelet's backoff reaches minutes).
  std::erase_if(seen_, [&](const auto& kv) {
    return now - kv.second.last_seen >= 2 * options_.repeat_window;
  });
  const std::string key = keyOf(about, reason, message);
  auto [it, fresh] = seen_.try_emplace(key, Seen{.sent_at = now, .last_seen = now, .first = wall});
  Seen& s = it->second;
  s.last_seen = now;
  ++s.occurrences;
  if (!fresh && now - s.sent_at < options_.repeat_window) {
    lk.unlock();
    count("repeat");  // folded into the next one sent
    return;
  }
  if (queue_.size() >= options_.queue_capacity) {
    lk.unlock();
    count("dropped");
    logger(Component::kKubelet)
        ->warn("Event {} about {} {}/{} dropped: {} Events wait for a slow API server", reason,
               about.kind, about.ns, about.name, options_.queue_capacity);
    return;
  }
  s.sent_at = now;
  queue_.push_back(Pending{.about = about,
                           .reason = reason,
                           .message = message,
                           .count = s.occurrences,
                           .first = s.first,
                           .last = wall});
  lk.unlock();
  worker_.wake();
}

std::optional<Clock::time_point> KubeEventRecorder::drain(const std::atomic<bool>& quit) {
  while (!quit) {
    Pending e;
    {
      std::lock_guard lk(mu_);
      if (queue_.empty()) break;
      e = std::move(queue_.front());
      queue_.pop_front();
    }
    post(e);
  }
  return std::nullopt;  // the next warning() wakes it
}

void KubeEventRecorder::post(const Pending& e) {
  auto log = logger(Component::kKubelet);
  auto path = dra::eventsPath(e.about.ns);
  if (!path.ok()) {
    count("failed");
    log->warn("Event {} about {} {}: {}", e.reason, e.about.kind, e.about.name, path.error().msg);
    return;
  }
  const json involved = {{"apiVersion", e.about.api_version},
                         {"kind", e.about.kind},
                         {"namespace", e.about.ns},
                         {"name", e.about.name},
                         {"uid", e.about.uid}};
  const json body = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      // The server adds five random characters, as kubelet's `<object>.<hex>` names are unique.
      {"metadata", {{"generateName", e.about.name + "."}, {"namespace", e.about.ns}}},
      {"involvedObject", involved},
      {"reason", e.reason},
      {"message", e.message},
      {"type", "Warning"},
      {"source", {{"component", options_.component}, {"host", options_.host}}},
      {"reportingComponent", options_.component},
      {"reportingInstance", options_.host},
      {"firstTimestamp", rfc3339(e.first)},
      {"lastTimestamp", rfc3339(e.last)},
      {"count", e.count}};
  auto r = client_.create(*path, body, Deadline::in(options_.post_timeout, clock_));
  if (!r.ok()) {
    count("failed");
    log->warn("Event {} about {} {}/{} not written: {}", e.reason, e.about.kind, e.about.ns,
              e.about.name, r.error().msg);
    return;
  }
  count("sent");
}

}  // namespace rdmanet::dp
