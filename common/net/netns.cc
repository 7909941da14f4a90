#include "common/net/netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/net/libnl_netlink.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

namespace rdmanet {
namespace {

bool hasDotDot(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0 && end - start == 2) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

Result<NetnsHandle> NetnsHandle::open(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return makeError(ErrorCode::kInvalidEnv, "netns path \"" + path + "\" is not absolute");
  }
  if (hasDotDot(path)) {
    return makeError(ErrorCode::kInvalidEnv, "netns path \"" + path + "\" contains \"..\"");
  }
  if (path.find('\0') != std::string::npos || path.size() > 4096) {
    return makeError(ErrorCode::kInvalidEnv, "netns path is not a valid path");
  }
  // O_NONBLOCK: a FIFO planted at the path must not hang us; it has no effect on nsfs files.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return errnoError(ErrorCode::kContainerUnknown, err, "netns \"" + path + "\"");
    }
    return errnoError(ErrorCode::kNetnsFailure, err, "opening netns \"" + path + "\"");
  }
  NetnsHandle handle(fd);
  // Checked on the open fd, not the path, so nothing can be swapped in between.
  struct statfs st {};
  if (::fstatfs(fd, &st) != 0) {
    return errnoError(ErrorCode::kNetnsFailure, errno, "statfs of netns \"" + path + "\"");
  }
  if (static_cast<unsigned long>(st.f_type) != NSFS_MAGIC) {
    return makeError(ErrorCode::kInvalidEnv,
                     "netns path \"" + path + "\" is not a namespace file (not on nsfs)");
  }
  const int type = ::ioctl(fd, NS_GET_NSTYPE);
  // Old kernels (< 4.11) lack NS_GET_NSTYPE (ENOTTY); setns(CLONE_NEWNET) still checks the type.
  if (type >= 0 && type != CLONE_NEWNET) {
    return makeError(ErrorCode::kInvalidEnv,
                     "netns path \"" + path + "\" is a namespace but not a network namespace");
  }
  if (type < 0 && errno != ENOTTY) {
    return errnoError(ErrorCode::kNetnsFailure, errno, "NS_GET_NSTYPE on \"" + path + "\"");
  }
  return handle;
}

Result<NetnsHandle> NetnsRunner::open(const std::string& netns_path) {
  return NetnsHandle::open(netns_path);
}

Status SetnsRunner::run(const std::string& netns_path, const Fn& fn) {
  RDMANET_ASSIGN_OR_RETURN(NetnsHandle target, NetnsHandle::open(netns_path));
  // thread-self, not self: setns changes only the calling thread.
  const int saved_fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (saved_fd < 0) {
    return errnoError(ErrorCode::kNetnsFailure, errno, "opening the current netns");
  }
  NetnsHandle saved(saved_fd);
  if (::setns(target.fd(), CLONE_NEWNET) != 0) {
    return errnoError(ErrorCode::kNetnsFailure, errno, "entering netns \"" + netns_path + "\"");
  }
  // Restores in a destructor so that even an exception escaping fn cannot leave this thread in
  // the pod's namespace.
  struct Restore {
    const NetnsHandle& saved;
    const std::string& path;
    ~Restore() {
      if (::setns(saved.fd(), CLONE_NEWNET) != 0) {
        // Continuing in the pod's namespace would apply host-side work to the wrong namespace.
        std::fprintf(stderr,
                     "rdmanet: FATAL: cannot return to the original netns after \"%s\": %s\n",
                     path.c_str(), std::strerror(errno));
        std::abort();
      }
    }
  } restore{saved, netns_path};
  // The socket must be opened inside: a netlink socket belongs to the netns it was made in.
  auto nl = LibnlNetlink::open();
  if (!nl.ok()) return nl.error().context("netlink in netns \"" + netns_path + "\"");
  return fn(**nl);
}

}  // namespace rdmanet
