#pragma once
// Network namespaces: opening one by path (validated), and running work inside one.

#include <functional>
#include <memory>
#include <string>

#include "common/base/fd.h"
#include "common/base/result.h"
#include "common/net/netlink.h"

namespace rdmanet {

// An open namespace file descriptor (an Fd, common/base/fd.h). Move-only; closes on destruction.
class NetnsHandle {
 public:
  NetnsHandle() = default;
  explicit NetnsHandle(int fd) : fd_(fd) {}

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.get() >= 0; }

  // Opens a namespace by path. The path must be absolute, contain no "..", and be an nsfs
  // file (statfs magic NSFS_MAGIC) of type network namespace. Error 3 if it does not exist,
  // 4 if it is not a network namespace.
  static Result<NetnsHandle> open(const std::string& path);

 private:
  Fd fd_;
};

// Runs work inside a network namespace with a netlink instance that belongs to it.
class NetnsRunner {
 public:
  using Fn = std::function<Status(Netlink&)>;
  virtual ~NetnsRunner() = default;
  // Enters `netns_path`, opens a fresh Netlink there, runs fn, and always returns the calling
  // thread to its original namespace. Error 3/4 from opening, 102 if setns fails.
  virtual Status run(const std::string& netns_path, const Fn& fn) = 0;
  // Opens a handle on `netns_path` for Netlink::moveToNetns / MacvlanSpec::netns_fd. Same
  // validation and errors as NetnsHandle::open (the default); fakes return handles on their
  // in-memory namespaces.
  virtual Result<NetnsHandle> open(const std::string& netns_path);
};

// The real runner: setns(2) on the calling thread. Single-threaded callers only (the CNI).
class SetnsRunner : public NetnsRunner {
 public:
  Status run(const std::string& netns_path, const Fn& fn) override;
};

}  // namespace rdmanet
