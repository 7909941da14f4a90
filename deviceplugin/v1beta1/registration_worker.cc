#include "deviceplugin/v1beta1/registration_worker.h"

#include <sys/stat.h>

namespace rdmanet::dp {

uint64_t kubeletSocketId(const std::filesystem::path& socket) {
  struct stat st {};
  if (::stat(socket.c_str(), &st) != 0) return 0;
  uint64_t id = (static_cast<uint64_t>(st.st_ino) * 1000003u) ^ static_cast<uint64_t>(st.st_dev);
  id = (id * 1000003u) ^ (static_cast<uint64_t>(st.st_ctim.tv_sec) * 1000000000u) ^
       static_cast<uint64_t>(st.st_ctim.tv_nsec);
  return id == 0 ? 1 : id;
}

Result<std::unique_ptr<RegistrationWorker>> RegistrationWorker::start(
    KubeletRegistrar& registrar, std::filesystem::path kubelet_socket) {
  RDMANET_ASSIGN_OR_RETURN(Wakeup w, Wakeup::open());
  return std::unique_ptr<RegistrationWorker>(
      new RegistrationWorker(registrar, std::move(kubelet_socket), std::move(w)));
}

RegistrationWorker::RegistrationWorker(KubeletRegistrar& registrar, std::filesystem::path socket,
                                       Wakeup done)
    : registrar_(registrar), socket_(std::move(socket)), done_(std::move(done)) {
  thread_ = std::thread([this] { loop(); });
}

RegistrationWorker::~RegistrationWorker() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RegistrationWorker::submit(Request r) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(r));
  }
  cv_.notify_all();
}

std::vector<RegistrationWorker::Outcome> RegistrationWorker::drain() {
  done_.clear();
  std::lock_guard lock(mu_);
  return std::exchange(results_, {});
}

void RegistrationWorker::loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return quit_ || !queue_.empty(); });
    if (quit_) return;
    Request r = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    // Which kubelet.sock the call reached: the one there before and after it. One that appeared
    // during the call is the one reached (there was none before); one replaced during the call
    // leaves it unknown (0), which the front answers by registering again.
    const uint64_t before = kubeletSocketId(socket_);
    Status st = registrar_.registerPool(socket_, r.reg);
    const uint64_t after = kubeletSocketId(socket_);
    const uint64_t kubelet_id = before == 0 || before == after ? after : 0;
    lock.lock();
    results_.push_back({std::move(r), std::move(st), kubelet_id});
    done_.notify();
  }
}

}  // namespace rdmanet::dp
