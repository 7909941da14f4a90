#include "deviceplugin/pools/allocate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace rdmanet::dp {

namespace {

std::string joinIds(const std::vector<std::string>& v, std::string_view prefix = "") {
  std::string s;
  for (const auto& x : v) s += fmt::format("{}{}{}", s.empty() ? "" : ",", prefix, x);
  return s;
}

std::string_view charKind(std::string_view name) {
  for (std::string_view k : {"uverbs", "umad", "issm"}) {
    if (name.starts_with(k)) return k;
  }
  return "";
}

// Appends `s` as a JSON string literal.
void appendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  out += '"';
}

// Appends ',"rdmanet":{"rail","switch","switchPort"}' for a device whose port has an LLDP
// neighbour: the rail and the switch port, beside sriov-network-device-plugin's keys (readers of
// that format skip a key they do not know).
void appendSwitchInfo(std::string& info, const PoolDevice& d) {
  if (d.rail.empty() && !d.neighbor) return;
  info += ",\"rdmanet\":{\"rail\":";
  appendJsonString(info, d.rail);
  if (d.neighbor) {
    info += ",\"switch\":";
    appendJsonString(
        info, d.neighbor->system_name.empty() ? d.neighbor->chassis_id : d.neighbor->system_name);
    info += ",\"switchPort\":";
    appendJsonString(info, d.neighbor->port_id);
  }
  info += '}';
}

}  // namespace

DeviceNode charDeviceNode(const CharDevice& c) {
  return {.container_path = c.dev_path,
          .host_path = c.dev_path,
          .permissions = "rw",
          .major = c.major,
          .minor = c.minor};
}

DeviceNode rdmaCmNode() {
  return {.container_path = std::string(kRdmaCmPath),
          .host_path = std::string(kRdmaCmPath),
          .permissions = "rw"};
}

std::string envName(const PoolConfig& cfg) {
  std::string s = fmt::format("PCIDEVICE_{}_{}", cfg.resource_prefix, cfg.resource_name);
  for (char& c : s) {
    c = std::isalnum(static_cast<unsigned char>(c))
            ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
            : '_';
  }
  return s;
}

bool isWellFormedId(std::string_view id) {
  if (id.empty() || id.size() > 63) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '.' || c == '-' ||
           c == '_';
  });
}

std::string gdrLevel(const std::vector<const PoolDevice*>& devs) {
  if (devs.empty()) return "";
  Distance worst = Distance::kPix;
  for (const PoolDevice* d : devs) {
    if (!d->gpu_distance) return "";
    worst = std::max(worst, *d->gpu_distance);
  }
  if (worst > Distance::kPxb) return "";
  return std::string(distanceName(worst));
}

Result<ContainerAllocation> buildAllocation(const Pool& pool, const std::vector<std::string>& ids,
                                            const AllocateOptions& opts) {
  if (ids.empty()) {
    return makeError(ErrorCode::kInvalidConfig, "container request names no devices");
  }
  std::vector<const PoolDevice*> devs;
  for (const std::string& id : ids) {
    if (!isWellFormedId(id)) {
      // Quoted and escaped: the ID is untrusted and ends up in logs.
      std::string quoted =
          nlohmann::json(id).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
      return makeError(ErrorCode::kInvalidConfig, fmt::format("malformed device ID {}", quoted));
    }
    if (std::count(ids.begin(), ids.end(), id) > 1) {
      return makeError(ErrorCode::kInvalidConfig, fmt::format("device {} requested twice", id));
    }
    const PoolDevice* d = pool.find(id);
    if (!d) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("device {} is not in pool {}", id, pool.config.fullName()));
    }
    if (!d->healthy) {
      return makeError(ErrorCode::kTryAgainLater, fmt::format("device {} is unhealthy", id));
    }
    devs.push_back(d);
  }

  // Built by hand rather than through nlohmann::json: Allocate is on the pod start path and the
  // bench holds it to 2x a bare gRPC call; the JSON tree cost more than the rest together.
  ContainerAllocation out;
  std::string info = "{";
  std::vector<std::string> hcas, addresses, rails;
  for (const PoolDevice* d : devs) {
    std::string addr = d->pci.str();
    if (info.size() > 1) info += ',';
    appendJsonString(info, d->id);
    info += ":{\"generic\":{\"deviceID\":";
    appendJsonString(info, addr);
    info += '}';
    if (!d->rdma_device.empty() || !d->char_devices.empty()) {
      info += ",\"rdma\":{";
      bool first = true;
      auto field = [&](std::string_view k, std::string_view v) {
        if (!first) info += ',';
        first = false;
        appendJsonString(info, k);
        info += ':';
        appendJsonString(info, v);
      };
      for (const CharDevice& c : d->char_devices) {
        std::string_view kind = charKind(c.name);
        if (!kind.empty()) field(kind, c.dev_path);
        if (!opts.cdi &&
            std::none_of(out.devices.begin(), out.devices.end(),
                         [&](const DeviceNode& n) { return n.host_path == c.dev_path; })) {
          out.devices.push_back(charDeviceNode(c));
        }
      }
      if (!d->rdma_device.empty()) {
        field("rdma_cm", kRdmaCmPath);
        field("rdma_dev", d->rdma_device);
        if (std::find(hcas.begin(), hcas.end(), d->rdma_device) == hcas.end()) {
          hcas.push_back(d->rdma_device);
        }
      }
      info += '}';
    }
    appendSwitchInfo(info, *d);
    info += '}';
    // Shared slots all stand for their PF: list the PF once.
    if (std::find(addresses.begin(), addresses.end(), addr) == addresses.end()) {
      addresses.push_back(std::move(addr));
      rails.push_back(d->rail);
    }
    if (opts.cdi) out.cdi_devices.push_back(pool.config.fullName() + "=" + d->id);
    if (!pool.config.pod_info_dir.empty()) {
      const std::string pci = d->pci.str();
      out.mounts.push_back({.container_path = fmt::format("{}/{}", kPodInfoMountRoot, pci),
                            .host_path = fmt::format("{}/{}", pool.config.pod_info_dir, pci)});
    }
  }
  info += '}';
  if (!opts.cdi && !hcas.empty()) {
    out.devices.push_back(rdmaCmNode());
  }
  std::string env = envName(pool.config);
  out.envs[env] = joinIds(addresses);
  out.envs[env + "_INFO"] = std::move(info);
  if (std::ranges::any_of(rails, [](const std::string& r) { return !r.empty(); })) {
    out.envs[env + "_RAILS"] = fmt::format("{}", fmt::join(rails, ","));  // by position
  }
  if (!hcas.empty()) out.envs["NCCL_IB_HCA"] = "=" + joinIds(hcas);
  if (const auto& l = pool.config.lossless) {
    if (l->dscp) out.envs["NCCL_IB_TC"] = std::to_string(*l->dscp << 2);
    if (l->priority) out.envs["NCCL_IB_SL"] = std::to_string(*l->priority);
  }
  if (std::string gdr = gdrLevel(devs); !gdr.empty()) out.envs["NCCL_NET_GDR_LEVEL"] = gdr;
  if (!out.mounts.empty()) {
    std::vector<std::string> dirs;
    dirs.reserve(out.mounts.size());
    for (const Mount& m : out.mounts) dirs.push_back(m.container_path);
    out.envs[env + "_POD_INFO"] = joinIds(dirs);
  }
  return out;
}

}  // namespace rdmanet::dp
