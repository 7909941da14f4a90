#include "cni/modes/claimed_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <vector>

#include "cni/conf/json_util.h"
#include "cni/conf/limits.h"
#include "common/base/bandwidth_limit.h"
#include "common/json/json_access.h"
#include "common/os/confined_path.h"
#include "common/os/read_file.h"

namespace rdmanet::cni {

namespace fs = std::filesystem;

namespace {

struct RecordedDevice {
  std::string resource_name;
  PciAddress pci;
  std::string claim_uid;  // the record's file name: the daemon names it
  std::string device;     // the DRA device, "" in records of older daemons
  std::optional<uint32_t> max_tx_rate_mbps{};
  std::string rate_problem{};
};

// A device's "maxTxRateMbps": its share of its port, when the record gives one. A value of the
// wrong type or range leaves the share unknown and says why in `rate_problem`.
void readRate(const nlohmann::json& d, RecordedDevice& out) {
  auto rate = optInt(d, "maxTxRateMbps", 1, kMaxBandwidthMbps);
  if (!rate.ok()) {
    out.rate_problem = rate.error().msg;
  } else if (*rate) {
    out.max_tx_rate_mbps = static_cast<uint32_t>(**rate);
  }
}

// A pod UID names a directory: letters, digits and '-' only (UIDs are RFC 4122 strings).
bool plausibleUid(const std::string& uid) {
  return !uid.empty() && uid.size() <= 64 && std::all_of(uid.begin(), uid.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// Every device of the pod's records, claims by UID, devices in allocation order. Errors as
// openPodRecords's, and 5 when a record cannot be read; records that do not parse are skipped.
Result<std::vector<RecordedDevice>> podRecordedDevices(const DraRecordsDir& where,
                                                       const std::string& pod_uid) {
  RDMANET_ASSIGN_OR_RETURN(Fd held, openPodRecords(where, pod_uid));
  if (held.get() < 0) return std::vector<RecordedDevice>();
  // Listed and read through the held directory: a component swapped for a symlink after the
  // walk changes nothing, and readFile refuses a record that is a symlink.
  const fs::path pod_dir = fmt::format("/proc/self/fd/{}", held.get());
  std::vector<fs::path> records;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(pod_dir, ec)) {
    if (e.path().extension() == ".json" && e.is_regular_file(ec)) records.push_back(e.path());
  }
  std::sort(records.begin(), records.end());
  std::vector<RecordedDevice> out;
  for (const fs::path& r : records) {
    RDMANET_ASSIGN_OR_RETURN(auto text, readFile(r, kMaxStateBytes));
    if (!text) continue;  // unprepared meanwhile
    auto doc = parseJson(*text, kStateLimits);
    if (!doc.ok() || !doc->is_object() || !(*doc)["devices"].is_array()) continue;
    for (const auto& d : (*doc)["devices"]) {
      if (!d.is_object()) continue;
      const auto name = d.find("resourceName");
      const auto addr = d.find("pciAddress");
      if (name == d.end() || !name->is_string() || addr == d.end() || !addr->is_string()) continue;
      auto pci = PciAddress::parse(addr->get<std::string>());
      if (!pci.ok()) continue;
      const auto device = d.find("device");
      RecordedDevice& rd = out.emplace_back(RecordedDevice{
          .resource_name = name->get<std::string>(),
          .pci = *pci,
          .claim_uid = r.stem().string(),
          .device = device != d.end() && device->is_string() ? device->get<std::string>()
                                                             : std::string()});
      readRate(d, rd);
    }
  }
  return out;
}

}  // namespace

Result<Fd> openPodRecords(const DraRecordsDir& where, const std::string& pod_uid) {
  if (!plausibleUid(pod_uid)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("K8S_POD_UID \"{}\" is not a pod UID", pod_uid));
  }
  auto held = openConfinedDir(where.root, where.dir + "/" + pod_uid, /*create=*/false);
  if (!held.ok() && held.error().sys_errno == ENOENT) return Fd();
  if (!held.ok()) return held.error().context("draDevicesDir");
  return held;
}

Result<std::vector<PciAddress>> podClaimedDevices(const DraRecordsDir& where,
                                                  const std::string& pod_uid) {
  RDMANET_ASSIGN_OR_RETURN(auto recorded, podRecordedDevices(where, pod_uid));
  std::vector<PciAddress> out;
  out.reserve(recorded.size());
  for (const RecordedDevice& d : recorded) out.push_back(d.pci);
  return out;
}

Result<std::optional<ClaimedDeviceRef>> claimOfDevice(const DraRecordsDir& where,
                                                      const std::string& pod_uid,
                                                      const PciAddress& pci) {
  RDMANET_ASSIGN_OR_RETURN(auto recorded, podRecordedDevices(where, pod_uid));
  for (RecordedDevice& d : recorded) {
    if (d.pci == pci) {
      return std::optional<ClaimedDeviceRef>(
          ClaimedDeviceRef{.claim_uid = std::move(d.claim_uid),
                           .device = std::move(d.device),
                           .max_tx_rate_mbps = d.max_tx_rate_mbps,
                           .rate_problem = std::move(d.rate_problem)});
    }
  }
  return std::optional<ClaimedDeviceRef>();
}

Result<PciAddress> claimedDevice(const DraRecordsDir& where, const std::string& pod_uid,
                                 const std::string& resource_name,
                                 const std::set<std::string>& taken) {
  RDMANET_ASSIGN_OR_RETURN(auto recorded, podRecordedDevices(where, pod_uid));
  size_t of_pool = 0;
  for (const RecordedDevice& d : recorded) {
    if (d.resource_name != resource_name) continue;
    ++of_pool;
    if (!taken.contains(d.pci.str())) return d.pci;
  }
  if (of_pool == 0) {
    return makeError(
        ErrorCode::kDeviceNotFound,
        fmt::format("no deviceID, and no DRA claim of pod {} holds a {} device", pod_uid,
                    resource_name),
        fmt::format("the pod needs a claim from {}'s DeviceClass (or Multus >= 4.3.1 to pass "
                    "deviceID), and the device plugin's --dra-pod-devices-dir must be {}",
                    resource_name, where.dir));
  }
  return makeError(ErrorCode::kDeviceNotFound,
                   fmt::format("every {} device of pod {}'s claims ({}) is attached already",
                               resource_name, pod_uid, of_pool),
                   "claim one device of the pool per rdmanet network of the pod");
}

Status fillClaimedDevice(NetConf& conf, const CniEnv& env, const StateStore& store,
                         const std::string& dra_devices_root) {
  const bool wants = env.command == Command::kAdd || env.command == Command::kCheck;
  if (!wants || conf.device_id || conf.dra_devices_dir.empty() || !conf.master.empty() ||
      conf.mode == Mode::kMacvlan) {
    return okStatus();
  }
  std::set<std::string> taken;
  for (const AttachmentState& st : store.listContainer(env.container_id)) {
    if (st.pci.empty()) continue;
    if (st.ifname == env.ifname) {
      if (env.command == Command::kCheck) {
        RDMANET_ASSIGN_OR_RETURN(conf.device_id, PciAddress::parse(st.pci));
        return okStatus();
      }
      continue;
    }
    taken.insert(st.pci);
  }
  RDMANET_ASSIGN_OR_RETURN(PciAddress pci,
                           claimedDevice({.root = dra_devices_root, .dir = conf.dra_devices_dir},
                                         env.args.pod_uid, conf.resource_name, taken));
  conf.device_id = pci;
  return okStatus();
}

}  // namespace rdmanet::cni
