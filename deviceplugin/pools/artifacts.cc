#include "deviceplugin/pools/artifacts.h"

#include <fmt/format.h>

#include "common/json/json_dump.h"
#include "common/os/atomic_file.h"
#include "common/os/make_dirs.h"
#include "deviceplugin/pools/cdi.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

namespace {

// Artifact directories are made on demand (0700: only the runtime and Multus, as root, read
// them), then the file is replaced atomically (common/os/atomic_file.h). No fsync: these files
// live under /var/run (tmpfs) and are rewritten on start, so only atomicity towards concurrent
// readers matters; an fsync per file would slow pool start-up on a disk-backed test dir. The
// same holds for the pool CDI specs (pools/cdi.h, not durable).
Status writeArtifact(const fs::path& path, std::string_view content) {
  RDMANET_RETURN_IF_ERROR(makeDirs(path.parent_path(), 0700));
  return writeFileAtomic(path, content, {.mode = 0600, .durable = false});
}

std::string dashed(const PoolConfig& cfg) {
  return fmt::format("{}-{}", cfg.resource_prefix, cfg.resource_name);
}

std::vector<CdiDevice> cdiDevices(const Pool& pool) {
  std::vector<CdiDevice> out;
  for (const PoolDevice& d : pool.devices) {
    CdiDevice c{.name = d.id};
    for (const CharDevice& cd : d.char_devices) c.edits.devices.push_back(charDeviceNode(cd));
    if (!d.rdma_device.empty()) c.edits.devices.push_back(rdmaCmNode());
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

nlohmann::json cdiSpec(const Pool& pool) {
  return encodeCdiSpec(pool.config.fullName(), cdiDevices(pool));
}

std::string cdiSpecFileName(const PoolConfig& cfg) {
  return fmt::format("rdmanet-{}.json", dashed(cfg));
}

Status writeCdiSpec(const fs::path& dir, const Pool& pool) {
  return writeCdiSpecFile(dir / cdiSpecFileName(pool.config), pool.config.fullName(),
                          cdiDevices(pool), {.durable = false});
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
  return writeArtifact(dir / deviceInfoFileName(cfg, d.id), dumpJson(deviceInfo(d)) + "\n");
}

}  // namespace rdmanet::dp
