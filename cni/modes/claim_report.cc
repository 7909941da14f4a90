#include "cni/modes/claim_report.h"

#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "cni/modes/claimed_device.h"
#include "common/dra/net_report.h"
#include "common/os/atomic_file.h"
#include "common/os/read_file.h"

namespace rdmanet::cni {

namespace fs = std::filesystem;

namespace {

// The report's path for `pci`, when the pod's records name it; nullopt otherwise.
std::optional<fs::path> reportPath(const CniEnv& env, const NetConf& conf, const PciAddress& pci,
                                   Logger& log) {
  if (conf.dra_devices_dir.empty() || env.args.pod_uid.empty()) return std::nullopt;
  auto ref = claimOfDevice(conf.dra_devices_dir, env.args.pod_uid, pci);
  if (!ref.ok()) {
    log.warn("no network report for {}: {}", pci.str(), ref.error().msg);
    return std::nullopt;
  }
  if (!*ref) return std::nullopt;  // not a claim's device
  return fs::path(conf.dra_devices_dir) / env.args.pod_uid /
         dra::netReportName((*ref)->claim_uid, (*ref)->device);
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

void reportAdd(const CniEnv& env, const NetConf& conf, const Result<CniResult>& result,
               Logger& log) {
  if (!conf.device_id) return;
  const auto path = reportPath(env, conf, *conf.device_id, log);
  if (!path) return;
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
  const Status st = writeFileAtomic(*path, dra::renderNetReport(r),
                                    AtomicWriteOptions{.mode = 0600, .durable = false});
  if (!st.ok()) log.warn("network report not written: {}", st.error().msg);
}

void withdrawReport(const CniEnv& env, const NetConf& conf, const PciAddress& pci, Logger& log) {
  const auto path = reportPath(env, conf, pci, log);
  if (!path) return;
  auto text = readFile(*path, dra::kMaxReportBytes);
  if (!text.ok() || !*text) return;  // none (or not ours to judge): nothing to withdraw
  auto r = dra::parseNetReport(**text);
  if (r.ok() &&
      (!r->ready() || r->container_id != env.container_id || r->interface_name != env.ifname)) {
    return;
  }
  if (::unlink(path->c_str()) != 0 && errno != ENOENT) {
    log.warn("network report {} not removed: errno {}", path->string(), errno);
  }
}

}  // namespace rdmanet::cni
