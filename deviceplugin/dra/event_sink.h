#pragma once
// EventSink: how DRA's kubelet side tells the cluster what went wrong with a claim, as a
// Kubernetes Event on the object a user looks at (`kubectl describe pod`, `kubectl get events`).
// Production writes them through the API server (apiserver/event_recorder.h); its own header so
// that the kubelet side, which reports, need not include the side that writes.

#include <string>

namespace rdmanet::dp {

// The object an Event is about (its involvedObject).
struct EventObject {
  std::string api_version{};  // "v1", "resource.k8s.io/v1"
  std::string kind{};         // "Pod", "ResourceClaim"
  std::string ns{};
  std::string name{};
  std::string uid{};
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Queues a Warning Event about `about` and returns at once: never blocks, never fails (an Event
  // that cannot be written is dropped with a log line). Repeats of one Event are folded together.
  // Thread-safe.
  virtual void warning(const EventObject& about, const std::string& reason,
                       const std::string& message) = 0;
};

}  // namespace rdmanet::dp
