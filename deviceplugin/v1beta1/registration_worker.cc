#include "deviceplugin/v1beta1/registration_worker.h"

#include <sys/stat.h>

#include "deviceplugin/logging.h"

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
    KubeletRegistrar& registrar, std::filesystem::path kubelet_socket, const Clock& clock) {
  RDMANET_ASSIGN_OR_RETURN(auto done, Mailbox<Outcome>::open());
  return std::unique_ptr<RegistrationWorker>(
      new RegistrationWorker(registrar, std::move(kubelet_socket), std::move(done), clock));
}

RegistrationWorker::RegistrationWorker(KubeletRegistrar& registrar, std::filesystem::path socket,
                                       std::unique_ptr<Mailbox<Outcome>> done, const Clock& clock)
    : registrar_(registrar),
      socket_(std::move(socket)),
      done_(std::move(done)),
      worker_(
          clock,
          [this](const std::atomic<bool>& quit) {
            registerQueued(quit);
            return std::optional<Clock::time_point>();
          },
          std::nullopt,
          [](std::string_view what) {
            logger(Component::kKubelet)->error("registration threw: {}", what);
          }) {}

void RegistrationWorker::submit(Request r) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(r));
  }
  worker_.wake();
}

void RegistrationWorker::registerQueued(const std::atomic<bool>& quit) {
  while (!quit) {
    Request r;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    // Which kubelet.sock the call reached: the one there before and after it. One that appeared
    // during the call is the one reached (there was none before); one replaced during the call
    // leaves it unknown (0), which the front answers by registering again.
    const uint64_t before = kubeletSocketId(socket_);
    Status st = registrar_.registerPool(socket_, r.reg);
    const uint64_t after = kubeletSocketId(socket_);
    const uint64_t kubelet_id = before == 0 || before == after ? after : 0;
    done_->post({std::move(r), std::move(st), kubelet_id});
  }
}

}  // namespace rdmanet::dp
