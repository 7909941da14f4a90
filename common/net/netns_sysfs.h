#pragma once
// Reading sysfs as another network namespace sees it.
//
// sysfs shows the net and infiniband class devices of the network namespace that mounted it. An
// RDMA device in exclusive RDMA netns mode, and a netdev moved into a pod, are missing from the
// daemon's /sys: only a sysfs mounted from inside the pod's namespace lists them.

#include <functional>
#include <string>

#include "common/base/result.h"
#include "common/base/sysfs.h"

namespace rdmanet {

class NetnsSysfs {
 public:
  using Fn = std::function<void(const Sysfs&)>;
  virtual ~NetnsSysfs() = default;
  // Runs fn with a Sysfs showing `netns_path`'s devices, on a thread that is in that network
  // namespace: a socket fn opens belongs to it (ethtool, netlink). Returns once fn has returned.
  // Errors: 3/4 from opening the namespace (NetnsHandle::open), 102 when a namespace or mount
  // step fails (fn is then not called). fn must not throw (it runs on another thread).
  virtual Status read(const std::string& netns_path, const Fn& fn) = 0;
};

// The real one. Each read runs on a fresh thread, which unshares its mount namespace (and its
// fs attributes, which CLONE_NEWNS requires), enters the pod's network namespace, makes its
// mounts private and mounts a read-only sysfs over <sysfs root>/sys, then runs fn. When the
// thread ends, its mount namespace and that mount go with it, and the namespace fd is closed,
// so nothing is left behind; the daemon's other threads never change namespace (CONTRIBUTING.md,
// "Seams"). Needs CAP_SYS_ADMIN. The caller's thread waits: sysfs reads do not block on the
// network, so a read costs a thread start, two namespace switches and a mount.
class MountingNetnsSysfs final : public NetnsSysfs {
 public:
  // `observer` (may be null) sees the operations made inside, as for Sysfs.
  explicit MountingNetnsSysfs(std::string sysfs_root = "/", SysfsObserver* observer = nullptr)
      : root_(std::move(sysfs_root)), observer_(observer) {}
  Status read(const std::string& netns_path, const Fn& fn) override;

 private:
  std::string root_;
  SysfsObserver* observer_;
};

}  // namespace rdmanet
