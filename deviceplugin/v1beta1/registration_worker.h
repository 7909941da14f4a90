#pragma once
// RegistrationWorker: runs KubeletRegistrar calls on a Worker (common/os/worker.h), so a slow or
// hung kubelet never stalls the daemon loop (health updates keep flowing while a Register waits
// for its deadline). Results come back through a Mailbox; fd() becomes readable when there are
// some. Destruction waits for a Register in progress (the registrar's deadline bounds it) and
// drops the requests not started.

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "common/os/mailbox.h"
#include "common/os/worker.h"
#include "deviceplugin/v1beta1/endpoint.h"

namespace rdmanet::dp {

// Identity of the kubelet.sock now at `socket` (inode and change time, so a reused inode of a
// restarted kubelet's socket still differs); 0 when there is none. One value per kubelet.sock
// generation.
uint64_t kubeletSocketId(const std::filesystem::path& socket);

class RegistrationWorker {
 public:
  struct Request {
    std::string pool{};  // resource name, the daemon's key
    uint64_t generation = 0;
    Registration reg{};
  };
  struct Outcome {
    Request request{};
    Status status{};
    // Which kubelet.sock the Register went to (kubeletSocketId(); 0 when unknown or none): the
    // front tells "registered with this kubelet" from "with the last one".
    uint64_t kubelet_id = 0;
  };

  // `registrar` and `clock` must outlive the worker. Error 5 when no eventfd can be made.
  static Result<std::unique_ptr<RegistrationWorker>> start(KubeletRegistrar& registrar,
                                                           std::filesystem::path kubelet_socket,
                                                           const Clock& clock);

  void submit(Request r);
  int fd() const { return done_->fd(); }
  std::vector<Outcome> drain() { return done_->drain(); }

 private:
  RegistrationWorker(KubeletRegistrar& registrar, std::filesystem::path socket,
                     std::unique_ptr<Mailbox<Outcome>> done, const Clock& clock);
  // The worker's job: every queued request in turn, until the queue is empty or quit is set.
  void registerQueued(const std::atomic<bool>& quit);

  KubeletRegistrar& registrar_;
  const std::filesystem::path socket_;
  std::unique_ptr<Mailbox<Outcome>> done_;
  std::mutex mu_;
  std::deque<Request> queue_;  // guarded by mu_
  Worker worker_;              // last: its thread may start on the members above at once
};

}  // namespace rdmanet::dp
