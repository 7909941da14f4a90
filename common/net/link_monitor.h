#pragma once
// LinkMonitor: link up/down/add/delete notifications for event-driven health checks.
//
// Subscribes to RTNLGRP_LINK in the network namespace of the thread that opens it. Put fd() in
// poll/epoll; when it is readable call drain(), which hands every pending RTM_NEWLINK (state
// change or new link) and RTM_DELLINK to the callback and never blocks.
//
// Overflow: when the kernel drops notifications because the socket buffer was full (ENOBUFS),
// events are lost; drain() then sets the resync flag, and the caller must re-dump
// (Netlink::links()) to learn the current state. takeResync() returns that flag and clears it.
//
// Errors: drain() returns 101 with sys_errno for a socket failure other than EAGAIN/ENOBUFS.
// Not thread-safe; one monitor per consumer thread.

#include <functional>
#include <memory>

#include "common/base/result.h"
#include "common/net/netlink.h"

namespace rdmanet {

class LinkMonitor {
 public:
  using Callback = std::function<void(const LinkInfo& link, bool deleted)>;
  virtual ~LinkMonitor() = default;

  // The real monitor: a NETLINK_ROUTE socket in the calling thread's namespace.
  static Result<std::unique_ptr<LinkMonitor>> open();

  // Readable when notifications are pending.
  virtual int fd() const = 0;
  // Delivers all pending notifications, in kernel order, then returns.
  virtual Status drain(const Callback& cb) = 0;
  // True (once) after notifications were lost; re-dump links to resync.
  virtual bool takeResync() = 0;
};

}  // namespace rdmanet
