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
// (a VF bound to vfio-pci, a PF whose netdev was moved away). Names that are not valid
// (isValidIfName) are left out and reported to the Sysfs observer, here and in listNetdevs().
std::vector<std::string> netdevNamesOf(const Sysfs& sysfs, const PciAddress& addr);
// All netdevs of a function.
std::vector<Netdev> netdevsOf(const Sysfs& sysfs, const PciAddress& addr);
// One netdev by name, via /sys/class/net/<name>. Error 100 if absent; error 7 if the name is
// not a valid interface name.
Result<Netdev> readNetdev(const Sysfs& sysfs, const std::string& name);
// Names in /sys/class/net, sorted.
std::vector<std::string> listNetdevs(const Sysfs& sysfs);

// Whether a name the kernel gave is one rdmanet takes: printable ASCII only (0x21-0x7e). The
// kernel allows any other byte in a netdev name but '/', ':' and whitespace (and nearly any in
// an RDMA device's), and a pod with NET_ADMIN can leave such a name on the host: a VF it renamed
// comes back with that name when the pod's netns goes. Such a name is not valid UTF-8 or holds
// control characters, and would end up in logs, JSON (ResourceSlices, device-info and CDI files)
// and Kubernetes attribute values, which cannot carry it: discovery refuses it (the device is
// seen without that netdev or RDMA device), and tells the Sysfs observer (onRefusedName).
bool isPrintableAsciiName(std::string_view name);

// An interface name rdmanet handles: the kernel's rule (1..15 bytes, not "." or "..", no '/',
// ':' or whitespace) and printable ASCII (isPrintableAsciiName).
bool isValidIfName(std::string_view name);

}  // namespace rdmanet
