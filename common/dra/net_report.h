#pragma once
// The network report: how the CNI hands what it did with a DRA claim's device to the daemon,
// which writes it into the claim's status.devices[].networkData (resource.k8s.io/v1
// AllocatedDeviceStatus).
//
// Why a file: the CNI runs as root once per pod and has no cluster credentials; the daemon has
// them, and it already owns the directory where it records each pod's claimed devices for the
// CNI (deviceplugin/dra/kubelet/pod_devices.h). So the CNI writes, beside the pod's record of the
// claim, one report per device it attached:
//   <draDevicesDir>/<pod UID>/<claim UID>.<device>.net
// atomically (common/os/atomic_file.h), mode 0600. ADD writes it (the interface, or the error
// that ended ADD), DEL removes it when it reports the DEL's own attachment; the daemon's
// unprepare removes every report of the claim with its record. The daemon polls the directory
// and writes the claims' status (deviceplugin/dra/claim_network_sync.h).
//
// The file is the CNI's word, and the CNI acts on a pod's input: the daemon trusts nothing in it.
// parseNetReport() refuses anything but the exact shape below within the API's limits, and the
// daemon takes a report only for a device of a claim it prepared, under a pod dir that holds its
// record of that claim. The content:
//   {"containerID": "...", "interfaceName": "eth1", "ips": ["10.0.0.5/24"],
//    "hardwareAddress": "aa:bb:cc:dd:ee:ff"}
// or, when ADD failed, {"containerID": "...", "interfaceName": "eth1",
//                       "error": {"code": 100, "msg": "..."}}.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::dra {

// The API's limits (k8s.io/api/resource/v1 NetworkDeviceData*).
inline constexpr size_t kMaxReportIps = 16;
inline constexpr size_t kMaxReportBytes = 4096;
inline constexpr size_t kMaxErrorMessage = 512;
inline constexpr std::string_view kReportSuffix = ".net";

struct NetReport {
  std::string container_id{};
  std::string interface_name{};
  std::vector<std::string> ips{};   // interface addresses "10.0.0.5/24", canonical
  std::string hardware_address{};   // lowercase, colon-separated; "" when unknown
  std::optional<int> error_code{};  // set when ADD failed (a CNI error code)
  std::string error_message{};      // printable ASCII, at most kMaxErrorMessage
  bool ready() const { return !error_code.has_value(); }
  bool operator==(const NetReport&) const = default;
};

// "<claim UID>.<device>.net". Both must be validated by the caller (a UID, a DNS label).
std::string netReportName(std::string_view claim_uid, std::string_view device);
// The claim UID and device a report's file name names; nullopt for any other name.
struct NetReportKey {
  std::string claim_uid;
  std::string device;
};
std::optional<NetReportKey> parseNetReportName(std::string_view filename);

// The JSON text of `r` (the CNI's side). Error messages are cut to kMaxErrorMessage and their
// non-printable bytes replaced, so that what the CNI writes is what parseNetReport accepts.
std::string renderNetReport(const NetReport& r);
// The daemon's side: error 6 when the text does not parse, 7 naming the field when it is not
// exactly the shape above (unknown keys, a bad interface name, more than kMaxReportIps or
// duplicate or non-canonical addresses, a bad MAC, an error code outside 1..999, an over-long
// or non-printable message), or when it is larger than kMaxReportBytes.
Result<NetReport> parseNetReport(std::string_view text);

}  // namespace rdmanet::dra
