#pragma once
// LinkSource: carrier changes of netdevs, for event-driven health. The daemon polls fd().
// The production source (openNetlinkLinkSource) is common/net's LinkMonitor (RTNLGRP_LINK)
// plus a LibnlNetlink dump for the initial state and after lost notifications.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/net/netlink.h"

namespace rdmanet::dp {

struct LinkUpdate {
  std::string name{};
  bool admin_up = false;  // IFF_UP
  bool carrier = false;   // IFF_LOWER_UP
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
  // The link state of each VF of PF netdev `pf` as the PF reports it, by VF index. A change of
  // it arrives as an update of the PF (the kernel notifies RTM_NEWLINK for the PF), but the
  // notification does not carry the VF table: ask here. Error 100 when `pf` is gone.
  virtual Result<std::map<int, VfLinkState>> vfLinkStates(const std::string& pf) = 0;
};

// Opens the netlink monitor and dump socket in the calling thread's namespace. Error 101.
Result<std::unique_ptr<LinkSource>> openNetlinkLinkSource();

}  // namespace rdmanet::dp
