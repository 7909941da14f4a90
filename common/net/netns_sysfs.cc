#include "common/net/netns_sysfs.h"

#include <sched.h>
#include <sys/mount.h>

#include <cerrno>
#include <filesystem>
#include <thread>

#include "common/net/netns.h"

namespace rdmanet {
namespace {

Error nsError(int err, const std::string& what, const std::string& path) {
  return errnoError(ErrorCode::kNetnsFailure, err, what + " for netns \"" + path + "\"");
}

// Runs on the dedicated thread only: every change it makes is to that thread's own namespaces.
Status inFreshThread(int netns_fd, const std::string& path, const std::string& root,
                     SysfsObserver* observer, const NetnsSysfs::Fn& fn) {
  if (::unshare(CLONE_NEWNS | CLONE_FS) != 0) return nsError(errno, "unshare(CLONE_NEWNS)", path);
  if (::setns(netns_fd, CLONE_NEWNET) != 0) return nsError(errno, "setns", path);
  // Private first, or the mount below would propagate to the host's shared /sys.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return nsError(errno, "making mounts private", path);
  }
  const std::string target = (std::filesystem::path(root) / "sys").string();
  if (::mount("sysfs", target.c_str(), "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              nullptr) != 0) {
    return nsError(errno, "mounting sysfs on " + target, path);
  }
  fn(Sysfs(root, observer));
  // Not needed (the mount dies with the thread's namespace) but it makes that immediate.
  (void)::umount2(target.c_str(), MNT_DETACH);
  return okStatus();
}

}  // namespace

Status MountingNetnsSysfs::read(const std::string& netns_path, const Fn& fn) {
  RDMANET_ASSIGN_OR_RETURN(NetnsHandle ns, NetnsHandle::open(netns_path));
  Status result = okStatus();
  std::thread worker([&] { result = inFreshThread(ns.fd(), netns_path, root_, observer_, fn); });
  worker.join();
  return result;
}

}  // namespace rdmanet
