#include "cni/modes/claim_report.h"

#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "cni/modes/claimed_device.h"
#include "common/dra/net_report.h"
#include "common/os/atomic_file.h"
#include "common/os/confined_path.h"
#include "common/os/read_file.h"

namespace rdmanet::cni {

namespace fs = std::filesystem;

namespace {

// The report for `pci` in the pod's records directory, held open (claimed_device.h), when the
// records name it; nullopt otherwise.
std::optional<ConfinedFile> reportFile(const CniEnv& env, const NetConf& conf,
                                       const std::string& root, const PciAddress& pci,
                                       Logger& log) {
  if (conf.dra_devices_dir.empty() || env.args.pod_uid.empty()) return std::nullopt;
  const DraRecordsDir where{.root = root, .dir = conf.dra_devices_dir};
  auto ref = claimOfDevice(where, env.args.pod_uid, pci);
  auto dir = ref.ok() ? openPodRecords(where, env.args.pod_uid) : Result<Fd>(ref.error());
  if (!dir.ok()) {
    log.warn("no network report for {}: {}", pci.str(), dir.error().msg);
    return std::nullopt;
  }
  // Not a claim's device, or one an older daemon recorded without its DRA device name.
  if (!*ref || (*ref)->device.empty() || dir->get() < 0) return std::nullopt;
  return ConfinedFile{.dir = std::move(*dir),
                      .name = dra::netReportName((*ref)->claim_uid, (*ref)->device)};
}

// Our interface's addresses: those the result gives the last interface named env.ifname in the
// pod (the result may carry earlier plugins' interfaces, from prevResult).
dra::NetReport reportOf(const CniEnv& env, const CniResult& result) {
  dra::NetReport r{.container_id = env.container_id, .interface_name = env.ifname};
  std::optional<int> idx;
  for (size_t i = 0; i < result.interfaces.size(); ++i) {
    const CniInterface& itf = result.interfaces[i];
    if (itf.name == env.ifname && !itf.sandbox.empty()) {
      idx = static_cast<int>(i);
      r.hardware_address = itf.mac;
    }
  }
  for (const CniIp& ip : result.ips) {
    if (idx && ip.interface == idx && r.ips.size() < dra::kMaxReportIps) {
      r.ips.push_back(ip.address.str());
    }
  }
  return r;
}

}  // namespace

void reportAdd(const CniEnv& env, const NetConf& conf, const std::string& dra_devices_root,
               const Result<CniResult>& result, Logger& log) {
  if (!conf.device_id) return;
  const auto file = reportFile(env, conf, dra_devices_root, *conf.device_id, log);
  if (!file) return;
  dra::NetReport r;
  if (result.ok()) {
    r = reportOf(env, *result);
  } else {
    r = {.container_id = env.container_id,
         .interface_name = env.ifname,
         .error_code = static_cast<int>(result.error().code),
         .error_message = result.error().msg};
  }
  // 0600: the daemon (root) reads it; the pod's addresses are nobody else's business.
  const Status st = writeFileAtomic(file->viaFd(), dra::renderNetReport(r),
                                    AtomicWriteOptions{.mode = 0600, .durable = false});
  if (!st.ok()) log.warn("network report not written: {}", st.error().msg);
}

void withdrawReport(const CniEnv& env, const NetConf& conf, const std::string& dra_devices_root,
                    const PciAddress& pci, Logger& log) {
  const auto file = reportFile(env, conf, dra_devices_root, pci, log);
  if (!file) return;
  auto text = readFile(file->viaFd(), dra::kMaxReportBytes);
  if (!text.ok() || !*text) return;  // none (or not ours to judge): nothing to withdraw
  auto r = dra::parseNetReport(**text);
  if (r.ok() &&
      (!r->ready() || r->container_id != env.container_id || r->interface_name != env.ifname)) {
    return;
  }
  if (::unlinkat(file->dir.get(), file->name.c_str(), 0) != 0 && errno != ENOENT) {
    log.warn("network report {} not removed: errno {}", file->name, errno);
  }
}

}  // namespace rdmanet::cni
