#pragma once
// Kernel event sources an event loop polls, as small RAII wrappers (move-only, non-blocking
// fds, drain() never blocks):
// - Inotify: the kubelet socket directory (kubelet restarts delete our sockets and recreate
//   kubelet.sock) and the config file's directory (ConfigMap updates swap a symlink);
// - UeventSocket: kobject uevents, which announce PCI functions appearing or vanishing
//   (sriov_numvfs changes, VFs rebound to vfio-pci) even when no netdev comes with them.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/base/fd.h"
#include "common/base/result.h"

namespace rdmanet {

class Inotify {
 public:
  struct Event {
    int wd = -1;
    uint32_t mask = 0;
    std::string name{};
  };
  // Error 5 when inotify is unavailable.
  static Result<Inotify> open();
  int fd() const { return fd_.get(); }
  // Watches a directory. Error 5 (with errno) if it cannot, e.g. it does not exist.
  Result<int> watch(const std::filesystem::path& dir, uint32_t mask);
  void unwatch(int wd);
  std::vector<Event> drain();

 private:
  explicit Inotify(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;
};

class UeventSocket {
 public:
  // Error 5 when the socket cannot be opened (no privileges, not in the initial netns).
  static Result<UeventSocket> open();
  int fd() const { return fd_.get(); }
  // Reads all pending uevents; the DEVPATH ("/devices/pci0000:00/.../net/ens1f0v0") of each one
  // that added, removed or rebound a PCI function, netdev or RDMA device, in kernel order.
  std::vector<std::string> drainRelevant();

 private:
  explicit UeventSocket(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;
};

// An eventfd used to wake a poll loop from another thread.
class Wakeup {
 public:
  static Result<Wakeup> open();
  int fd() const { return fd_.get(); }
  void notify();
  void clear();

 private:
  explicit Wakeup(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;
};

}  // namespace rdmanet
