#pragma once
// RegistrationWorker: runs KubeletRegistrar calls on its own thread, so a slow or hung kubelet
// never stalls the daemon loop (health updates keep flowing while a Register waits for its
// deadline). Results come back through a queue; fd() becomes readable when there are some.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "common/os/watch.h"
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

  // `registrar` must outlive the worker.
  static Result<std::unique_ptr<RegistrationWorker>> start(KubeletRegistrar& registrar,
                                                           std::filesystem::path kubelet_socket);
  ~RegistrationWorker();

  void submit(Request r);
  int fd() const { return done_.fd(); }
  std::vector<Outcome> drain();

 private:
  RegistrationWorker(KubeletRegistrar& registrar, std::filesystem::path socket, Wakeup done);
  void loop();

  KubeletRegistrar& registrar_;
  const std::filesystem::path socket_;
  Wakeup done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;
  std::vector<Outcome> results_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace rdmanet::dp
