#include "deviceplugin/v1beta1/registration_worker.h"

namespace rdmanet::dp {

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
    Status st = registrar_.registerPool(socket_, r.reg);
    lock.lock();
    results_.push_back({std::move(r), std::move(st)});
    done_.notify();
  }
}

}  // namespace rdmanet::dp
