#pragma once
// Network interfaces, as sysfs shows them (/sys/class/net/<if> -> .../net/<if>).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/base/sysfs.h"

namespace rdmanet {

enum class LinkType { kEther, kInfiniband, kOther };
// "ether", "infiniband" or "other": the words pool selectors (`linkTypes`) and the DRA
// attribute rdmanet.io/linkType use.
std::string_view linkTypeName(LinkType t);

struct Netdev {
  std::string name;
  int ifindex = 0;
  std::string mac;  // "aa:bb:cc:dd:ee:ff" as sysfs prints it (address)
  int mtu = 0;
  std::string operstate;                  // "up", "down", "unknown", ...
  std::optional<int> speed_mbps;          // absent when the link is down or the driver does not say
  LinkType link_type = LinkType::kOther;  // from `type`: 1 = ether, 32 = infiniband
  std::optional<PciAddress> pci;          // the function it belongs to, if any

  bool operator==(const Netdev&) const = default;
};

// Netdev names under a function's net/ directory, sorted. Empty for a function with no netdev
// (a VF bound to vfio-pci, a PF whose netdev was moved away).
std::vector<std::string> netdevNamesOf(const Sysfs& sysfs, const PciAddress& addr);
// All netdevs of a function.
std::vector<Netdev> netdevsOf(const Sysfs& sysfs, const PciAddress& addr);
// One netdev by name, via /sys/class/net/<name>. Error 100 if absent; error 7 if the name is
// not a valid interface name.
Result<Netdev> readNetdev(const Sysfs& sysfs, const std::string& name);
// Names in /sys/class/net, sorted.
std::vector<std::string> listNetdevs(const Sysfs& sysfs);

// Kernel interface-name rule: 1..15 bytes, not "." or "..", no '/', ':' or whitespace.
bool isValidIfName(std::string_view name);

}  // namespace rdmanet
