#pragma once
// KubeEventRecorder: the EventSink (dra/event_sink.h) that writes core v1 Events through the API
// server (POST /api/v1/namespaces/<ns>/events: RBAC `create` on events, nothing more).
//
// A prepare must never wait for, nor fail with, its Event: warning() only queues, and a worker
// thread of the recorder's own posts. So:
// - the queue is bounded (queue_capacity): while the API server is slow, further Events are
//   dropped, each with a log line;
// - each POST is bounded by post_timeout (on the injected clock, as the client's deadline): a
//   stalled server costs the worker that long per Event, never a prepare;
// - repeats are folded, as kubelet's event recorder counts them: an Event identical to one sent
//   less than repeat_window ago (same object, reason and message) is not sent but counted, and
//   the first one after the window is sent with `count` = every occurrence so far and the
//   `firstTimestamp` of the first (as kubelet's patched Event would read; with `create` alone
//   it is a new Event). A claim that fails every few seconds for an hour thus makes a dozen
//   Events, not a thousand. One quiet for two windows is forgotten.
// Outcomes are counted on /metrics (rdmanet_dra_events_total, deviceplugin/metrics.h). The
// client should be the recorder's alone: the destructor cancels it to end a POST in flight.

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/base/clock.h"
#include "common/kube/client.h"
#include "common/os/worker.h"
#include "deviceplugin/dra/event_sink.h"
#include "deviceplugin/metrics.h"

namespace rdmanet::dp {

struct EventRecorderOptions {
  std::string component = "rdmanet-device-plugin";  // source.component, reportingComponent
  std::string host{};                               // source.host, reportingInstance: the node
  size_t queue_capacity = 32;
  std::chrono::milliseconds post_timeout{std::chrono::seconds(5)};
  std::chrono::milliseconds repeat_window{std::chrono::minutes(5)};
};

class KubeEventRecorder final : public EventSink {
 public:
  // `client`, `clock` and `metrics` (may be null) must outlive the recorder.
  KubeEventRecorder(kube::KubeClient& client, EventRecorderOptions options, const Clock& clock,
                    Metrics* metrics = nullptr);
  ~KubeEventRecorder() override;

  void warning(const EventObject& about, const std::string& reason,
               const std::string& message) override;

 private:
  struct Pending {
    EventObject about;
    std::string reason, message;
    uint64_t count = 1;
    std::chrono::system_clock::time_point first, last;  // wall time: the Event's timestamps
  };
  struct Seen {
    Clock::time_point sent_at;    // when the last one went into the queue
    Clock::time_point last_seen;  // the last warning() of it
    uint64_t occurrences = 0;     // since the first: the `count` of the next one sent
    std::chrono::system_clock::time_point first;
  };
  std::optional<Clock::time_point> drain(const std::atomic<bool>& quit);
  void post(const Pending& e);
  void count(std::string_view result);

  kube::KubeClient& client_;
  const EventRecorderOptions options_;
  const Clock& clock_;
  Metrics* const metrics_;
  std::mutex mu_;
  std::deque<Pending> queue_;         // guarded by mu_
  std::map<std::string, Seen> seen_;  // by object, reason and message; guarded by mu_
  Worker worker_;                     // last: its thread starts once the rest exists
};

}  // namespace rdmanet::dp
