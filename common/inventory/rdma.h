#pragma once
// RDMA devices (/sys/class/infiniband/<dev>) and their user-space char devices.
//
// Hardware devices (mlx5_N) live under their PCI function and have a `device` link back to it.
// Software devices (Soft-RoCE rxe, siw) live under /sys/devices/virtual/infiniband/ with no PCI
// parent; their `parent` file names the netdev they run on, so they are associated with a PCI
// function through that netdev.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/base/sysfs.h"

namespace rdmanet {

struct RdmaGid {
  int index = 0;
  std::string gid;   // "fe80:0000:...", as in ports/N/gids/<index>
  std::string type;  // "RoCE v2", "IB/RoCE v1" (gid_attrs/types/<index>), empty if unknown
  std::string ndev;  // gid_attrs/ndevs/<index>, empty if unknown

  bool operator==(const RdmaGid&) const = default;
};

struct RdmaPort {
  int num = 1;
  std::string state;          // "ACTIVE" (from "4: ACTIVE")
  int state_num = 0;          // 4
  std::string phys_state;     // "LinkUp" (from "5: LinkUp")
  int phys_state_num = 0;     // 5
  std::string link_layer;     // "Ethernet" or "InfiniBand"
  std::vector<RdmaGid> gids;  // only non-zero GIDs

  bool operator==(const RdmaPort&) const = default;
};

// A user-space char device of an RDMA device: uverbsN, umadN, issmN or rdma_cm.
struct RdmaCharDevice {
  std::string name;      // "uverbs0"
  std::string dev_path;  // "/dev/infiniband/uverbs0"
  int major = 0;         // from the class device's `dev` ("231:192"); 0 if unknown
  int minor = 0;

  bool operator==(const RdmaCharDevice&) const = default;
};

struct RdmaDevice {
  std::string name;               // "mlx5_0", "rxe0"
  std::optional<PciAddress> pci;  // the function it belongs to (via `device` or `parent`)
  std::string parent_netdev;      // software devices: the netdev named in `parent`
  bool is_software = false;       // under devices/virtual/infiniband
  std::string node_guid;
  std::vector<RdmaPort> ports;
  std::vector<RdmaCharDevice> char_devices;  // uverbs/umad/issm of this device, plus rdma_cm

  bool operator==(const RdmaDevice&) const = default;
};

// What to read of an RDMA device. The GID tables are the bulk of a device's attributes (up to
// 255 entries per port on mlx5) and only the doctor and the CNI look at them.
struct RdmaReadOptions {
  bool gids = true;  // false: ports come with no GIDs
};

// Names in /sys/class/infiniband, sorted. Names that are not valid (empty, 64 bytes or more,
// "." or "..", a '/', or not printable ASCII: netdev.h, isPrintableAsciiName) are left out and
// reported to the Sysfs observer, here and in RdmaReader::under().
std::vector<std::string> listRdmaDevices(const Sysfs& sysfs);

// Reads RDMA devices for one pass over the node (a scan, a rescan, one CNI call).
//
// Each device costs a fixed number of sysfs operations, whatever the node holds. What is shared
// by all devices is read at most once per reader, on first need: the class listing of
// /sys/class/infiniband_verbs and infiniband_mad with each entry's `ibdev` (for devices whose
// function has no char-device directories of its own: software devices, trees without them),
// and rdma_cm's numbers. So a pass over N devices is O(N), never O(N^2). A reader is for one
// pass: what it caches goes stale as the node changes. Not thread-safe.
class RdmaReader {
 public:
  explicit RdmaReader(const Sysfs& sysfs, RdmaReadOptions opts = {});

  // One device by its class name. Error 7 for an invalid name, 100 if absent.
  Result<RdmaDevice> read(const std::string& name);
  // Hardware devices under a PCI function (<function>/infiniband/<name>), sorted by name. A
  // device missing from /sys/class/infiniband is read where it sits.
  std::vector<RdmaDevice> under(const PciAddress& fn);
  // Every device listed in /sys/class/infiniband, each read once, grouped by the function it
  // belongs to (hardware: its `device` link; software: its parent netdev's function) and sorted
  // by name. Devices that belong to no PCI function are left out.
  std::map<PciAddress, std::vector<RdmaDevice>> byFunction();
  // The same for software devices (rxe, siw) only: one readlink per class entry tells them
  // from hardware ones, which are not read. With `want`, a software device is read only when
  // its parent netdev's function is wanted (a PF-only scan skips the VFs' devices for the cost
  // of their `parent` and its netdev).
  std::map<PciAddress, std::vector<RdmaDevice>> softwareByFunction(
      const std::function<bool(const PciAddress&)>& want = {});

 private:
  struct ClassCharDevice {
    std::string ibdev;
    RdmaCharDevice dev;
  };

  RdmaDevice readAt(const std::string& dir, const std::string& name);
  const std::vector<ClassCharDevice>& classCharDevices();
  const RdmaCharDevice& rdmaCm();

  const Sysfs& sysfs_;
  RdmaReadOptions opts_;
  std::optional<std::vector<ClassCharDevice>> class_chars_;  // by class dir, then name
  std::optional<RdmaCharDevice> rdma_cm_;
};

// One-shot forms of RdmaReader's methods, for callers that read a single device or function.
// A loop over devices or functions uses one RdmaReader instead.
Result<RdmaDevice> readRdmaDevice(const Sysfs& sysfs, const std::string& name,
                                  const RdmaReadOptions& opts = {});
std::vector<RdmaDevice> rdmaDevicesUnder(const Sysfs& sysfs, const PciAddress& addr,
                                         const RdmaReadOptions& opts = {});
std::map<PciAddress, std::vector<RdmaDevice>> rdmaDevicesByFunction(
    const Sysfs& sysfs, const RdmaReadOptions& opts = {});
std::map<PciAddress, std::vector<RdmaDevice>> softwareRdmaDevicesByFunction(
    const Sysfs& sysfs, const RdmaReadOptions& opts = {});
// RDMA devices belonging to one PCI function: hardware ones under it, and software ones whose
// parent netdev is one of its netdevs. Linear in the node's RDMA devices (one readlink each to
// find the software ones): for one function, never in a loop over functions.
std::vector<RdmaDevice> rdmaDevicesOf(const Sysfs& sysfs, const PciAddress& addr);

}  // namespace rdmanet
