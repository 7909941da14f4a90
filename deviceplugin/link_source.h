#pragma once
// LinkSource: carrier changes of netdevs, for event-driven health. The daemon polls fd().
// The production source (openNetlinkLinkSource) is common/net's LinkMonitor (RTNLGRP_LINK)
// plus a LibnlNetlink dump for the initial state and after lost notifications.

#include <memory>
#include <string>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::dp {

struct LinkUpdate {
  std::string name{};
  bool carrier = false;  // IFF_UP and IFF_LOWER_UP
  bool deleted = false;
};

class LinkSource {
 public:
  virtual ~LinkSource() = default;
  virtual int fd() const = 0;
  // Pending updates, in kernel order; never blocks.
  virtual std::vector<LinkUpdate> drain() = 0;
  // True once after notifications were lost: dump() again.
  virtual bool takeResync() = 0;
  // Every link of our namespace now.
  virtual Result<std::vector<LinkUpdate>> dump() = 0;
};

// Opens the netlink monitor and dump socket in the calling thread's namespace. Error 101.
Result<std::unique_ptr<LinkSource>> openNetlinkLinkSource();

}  // namespace rdmanet::dp
