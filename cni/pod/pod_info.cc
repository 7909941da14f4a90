#include "cni/pod/pod_info.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "cni/state/state_store.h"
#include "common/json/json_access.h"
#include "common/json/json_dump.h"
#include "common/os/atomic_file.h"
#include "common/os/confined_path.h"

namespace rdmanet::cni {
namespace {

namespace fs = std::filesystem;

// Copies `key` of `from` into `to` under `as`, when present.
void copyKey(const nlohmann::json& from, const char* key, nlohmann::json& to, const char* as) {
  if (auto it = from.find(key); it != from.end()) to[as] = *it;
}

// Only characters a shell and an env-file reader take as they are.
bool plainValue(const std::string& v) {
  if (v.empty()) return false;
  for (char c : v) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == ':' || c == '/' || c == '_' || c == '-' || c == ',';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string podInfoDirFor(const std::string& root, const PciAddress& pci) {
  return root + "/" + pci.str();
}

nlohmann::json podInfoJson(const nlohmann::json& device_info, const std::string& ifname,
                           const CniResult& result) {
  nlohmann::json info = {{"ifname", ifname}};
  const nlohmann::json pci = device_info.value("pci", nlohmann::json::object());
  const nlohmann::json ext = device_info.value("rdmanet", nlohmann::json::object());
  copyKey(pci, "pci-address", info, "pci-address");
  copyKey(pci, "pf-pci-address", info, "pf-pci-address");
  copyKey(pci, "rdma-device", info, "rdma-device");
  for (const char* k :
       {"mode", "numa-node", "vlan", "pcp", "lossless-priority", "dscp", "roce-v2-gid-index"}) {
    copyKey(ext, k, info, k);
  }
  // NCCL_IB_TC is the GRH's traffic class byte: DSCP in its upper six bits.
  if (auto dscp = optInt(ext, "dscp", 0, 63); dscp.ok() && dscp->has_value()) {
    info["traffic-class"] = **dscp << 2;
  }
  nlohmann::json ips = nlohmann::json::array();
  for (const auto& ip : result.ips) {
    ips.push_back(ip.address.str());
    if (ip.address.address.isV4() && !info.contains("ip")) {
      info["ip"] = ip.address.address.str();
    }
  }
  info["ips"] = ips;
  return info;
}

std::string podInfoEnv(const nlohmann::json& info) {
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"roce-v2-gid-index", "NCCL_IB_GID_INDEX"},
      {"traffic-class", "NCCL_IB_TC"},
      {"lossless-priority", "NCCL_IB_SL"},
      {"ifname", "RDMANET_IFNAME"},
      {"ip", "RDMANET_IP"},
      {"pci-address", "RDMANET_PCI_ADDRESS"},
      {"rdma-device", "RDMANET_RDMA_DEVICE"},
      {"vlan", "RDMANET_VLAN"},
      {"pcp", "RDMANET_PCP"},
      {"dscp", "RDMANET_DSCP"},
      {"numa-node", "RDMANET_NUMA_NODE"},
  };
  std::string out;
  for (const auto& [key, var] : kVars) {
    auto it = info.find(key);
    if (it == info.end()) continue;
    const std::string v = it->is_string() ? it->get<std::string>() : dumpJson(*it);
    if (plainValue(v)) out += fmt::format("{}={}\n", var, v);
  }
  return out;
}

Status writePodInfo(const std::string& root, const std::string& dir, const nlohmann::json& info) {
  // The podInfoDir's own parent may be missing too: the chart's default,
  // /var/run/rdmanet/pod-info, is on a tmpfs that nothing else fills after a boot (a real
  // cluster's first ADD failed with ENOENT on /var/run/rdmanet).
  RDMANET_ASSIGN_OR_RETURN(Fd held, openConfinedDir(root, dir, true));
  const fs::path d = fmt::format("/proc/self/fd/{}", held.get());
  // Read by the pod's containers, whatever their user; written as the store's files are.
  constexpr AtomicWriteOptions kReadable{.mode = 0644, .durable = kCniWrite.durable};
  RDMANET_RETURN_IF_ERROR(
      writeFileAtomic(d / kPodInfoJsonFile, dumpJson(info, 2) + "\n", kReadable));
  return writeFileAtomic(d / kPodInfoEnvFile, podInfoEnv(info), kReadable);
}

void removePodInfo(const std::string& root, const std::string& dir) {
  auto held = openConfinedDir(root, dir, false);
  if (!held.ok()) return;
  for (const char* f : {kPodInfoEnvFile, kPodInfoJsonFile}) (void)::unlinkat(held->get(), f, 0);
  // A write that a crash cut short left its temp file here (common/os/atomic_file.h): nobody
  // holds it now.
  (void)sweepAtomicTemps(fmt::format("/proc/self/fd/{}", held->get()));
}

}  // namespace rdmanet::cni
