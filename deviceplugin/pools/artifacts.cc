#include "deviceplugin/pools/artifacts.h"

#include <fmt/format.h>

#include "common/os/atomic_file.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

namespace {

// Artifact directories are made on demand (0700: only the runtime and Multus, as root, read
// them), then the file is replaced atomically (common/os/atomic_file.h). No fsync: these files
// live under /var/run (tmpfs) and are rewritten on start, so only atomicity towards concurrent
// readers matters; an fsync per file would slow pool start-up on a disk-backed test dir.
Status writeArtifact(const fs::path& path, std::string_view content) {
  std::error_code ec;
  const fs::path dir = path.parent_path();
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) {
      return errnoError(ErrorCode::kIoFailure, ec.value(),
                        fmt::format("cannot create {}", dir.string()));
    }
    fs::permissions(dir, fs::perms::owner_all, ec);
  }
  return writeFileAtomic(path, content, {.mode = 0600, .durable = false});
}

}  // namespace

namespace {

std::string dashed(const PoolConfig& cfg) {
  return fmt::format("{}-{}", cfg.resource_prefix, cfg.resource_name);
}

nlohmann::json deviceNode(const std::string& path, int major, int minor) {
  nlohmann::json n = {{"path", path}, {"hostPath", path}, {"type", "c"}, {"permissions", "rw"}};
  if (major > 0) {
    n["major"] = major;
    n["minor"] = minor;
  }
  return n;
}

}  // namespace

nlohmann::json cdiSpec(const Pool& pool) {
  nlohmann::json devices = nlohmann::json::array();
  for (const PoolDevice& d : pool.devices) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const CharDevice& c : d.char_devices) {
      nodes.push_back(deviceNode(c.dev_path, c.major, c.minor));
    }
    if (!d.rdma_device.empty()) nodes.push_back(deviceNode(std::string(kRdmaCmPath), 0, 0));
    devices.push_back({{"name", d.id}, {"containerEdits", {{"deviceNodes", nodes}}}});
  }
  return {{"cdiVersion", kCdiVersion}, {"kind", pool.config.fullName()}, {"devices", devices}};
}

std::string cdiSpecFileName(const PoolConfig& cfg) {
  return fmt::format("rdmanet-{}.json", dashed(cfg));
}

Status writeCdiSpec(const fs::path& dir, const Pool& pool) {
  return writeArtifact(dir / cdiSpecFileName(pool.config), cdiSpec(pool).dump(2) + "\n");
}

void removeCdiSpec(const fs::path& dir, const PoolConfig& cfg) {
  std::error_code ec;
  fs::remove(dir / cdiSpecFileName(cfg), ec);
}

nlohmann::json deviceInfo(const PoolDevice& d) {
  nlohmann::json pci = {{"pci-address", d.pci.str()}};
  if (d.pf) pci["pf-pci-address"] = d.pf->str();
  if (!d.rdma_device.empty()) pci["rdma-device"] = d.rdma_device;
  return {{"type", "pci"}, {"version", kDeviceInfoVersion}, {"pci", pci}};
}

std::string deviceInfoFileName(const PoolConfig& cfg, const std::string& id) {
  return fmt::format("{}-{}-device.json", dashed(cfg), id);
}

Status writeDeviceInfo(const fs::path& dir, const PoolConfig& cfg, const PoolDevice& d) {
  return writeArtifact(dir / deviceInfoFileName(cfg, d.id), deviceInfo(d).dump() + "\n");
}

}  // namespace rdmanet::dp
