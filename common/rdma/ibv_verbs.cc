#include "common/rdma/ibv_verbs.h"

#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "common/base/enum_names.h"
#include "common/inventory/rdma_port_state.h"

namespace rdmanet {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;

struct ContextDeleter {
  void operator()(ibv_context* c) const { (void)ibv_close_device(c); }
};
using Context = std::unique_ptr<ibv_context, ContextDeleter>;

Result<DeviceList> listDevices(int& n) {
  errno = 0;
  DeviceList list(ibv_get_device_list(&n));
  if (!list) {
    // ENOSYS: the kernel has no uverbs support at all; an empty list is not an error.
    return errnoError(ErrorCode::kRdmaFailure, errno ? errno : ENOSYS,
                      "verbs: ibv_get_device_list");
  }
  return list;
}

// ibv_port_attr.active_speed's values (IB_SPEED_*); "" for one this table does not know.
std::string_view speedName(int s) {
  static constexpr EnumName<int> kSpeeds[] = {{"SDR", 1},  {"DDR", 2},  {"QDR", 4},  {"FDR10", 8},
                                              {"FDR", 16}, {"EDR", 32}, {"HDR", 64}, {"NDR", 128}};
  return nameOf<int>(kSpeeds, s, "");
}

// The sysfs spelling of a GID: eight zero-padded groups ("%pI6" in core/sysfs.c show_port_gid).
std::string gidText(const ibv_gid& g) {
  std::string s;
  for (int i = 0; i < 16; i += 2) {
    if (i) s += ':';
    s += fmt::format("{:02x}{:02x}", g.raw[i], g.raw[i + 1]);
  }
  return s;
}

GidType gidType(uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_IB:
      return GidType::kIb;
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    case IBV_GID_TYPE_ROCE_V2:
      return GidType::kRoceV2;
    default:
      return GidType::kUnknown;
  }
}

std::string ifName(uint32_t ifindex) {
  char buf[IF_NAMESIZE] = {};
  if (ifindex == 0 || !if_indextoname(ifindex, buf)) return {};
  return buf;
}

}  // namespace

Result<std::vector<std::string>> IbvRdmaVerbs::devices() {
  int n = 0;
  RDMANET_ASSIGN_OR_RETURN(DeviceList list, listDevices(n));
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) names.emplace_back(ibv_get_device_name(list.get()[i]));
  std::sort(names.begin(), names.end());
  return names;
}

Result<DeviceFacts> IbvRdmaVerbs::query(const std::string& device) {
  int n = 0;
  RDMANET_ASSIGN_OR_RETURN(DeviceList list, listDevices(n));
  ibv_device* dev = nullptr;
  for (int i = 0; i < n; ++i) {
    if (device == ibv_get_device_name(list.get()[i])) dev = list.get()[i];
  }
  if (!dev) {
    return makeError(ErrorCode::kDeviceNotFound,
                     fmt::format("verbs: no device {} (not listed by libibverbs)", device));
  }
  errno = 0;
  Context ctx(ibv_open_device(dev));
  if (!ctx) {
    return errnoError(ErrorCode::kRdmaFailure, errno ? errno : ENODEV,
                      fmt::format("verbs: ibv_open_device({})", device));
  }
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(ctx.get(), &attr); rc != 0) {
    return errnoError(ErrorCode::kRdmaFailure, rc,
                      fmt::format("verbs: ibv_query_device({})", device));
  }
  DeviceFacts f{.name = device, .source = FactSource::kVerbs};
  for (int port = 1; port <= attr.phys_port_cnt; ++port) {
    ibv_port_attr pa{};
    if (int rc = ibv_query_port(ctx.get(), static_cast<uint8_t>(port), &pa); rc != 0) {
      return errnoError(ErrorCode::kRdmaFailure, rc,
                        fmt::format("verbs: ibv_query_port({}, {})", device, port));
    }
    PortFacts p{.num = port,
                // The kernel's sysfs spelling, so the two sources compare.
                .state = std::string(rdmaPortStateName(pa.state, "NOP")),
                .state_num = static_cast<int>(pa.state),
                .link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
                .active_mtu = ibMtuBytes(pa.active_mtu),
                .max_mtu = ibMtuBytes(pa.max_mtu)};
    const int lanes = ibWidthLanes(pa.active_width);
    p.rate_gbps = ibSpeedGbps(pa.active_speed) * lanes;
    if (p.rate_gbps > 0) {
      p.rate = fmt::format("{:g} Gb/sec ({}X {})", p.rate_gbps, lanes, speedName(pa.active_speed));
    }
    f.ports.push_back(std::move(p));
  }
  // One call for every port's valid entries (rdma-core >= 32; Debian 12 ships 44). The table
  // is at most gid_tbl_len per port.
  size_t max_entries = 0;
  for (int port = 1; port <= attr.phys_port_cnt; ++port) max_entries += 256;
  std::vector<ibv_gid_entry> entries(std::max<size_t>(max_entries, 1));
  const ssize_t got = ibv_query_gid_table(ctx.get(), entries.data(), entries.size(), 0);
  if (got < 0) {
    return errnoError(ErrorCode::kRdmaFailure, static_cast<int>(-got),
                      fmt::format("verbs: ibv_query_gid_table({})", device));
  }
  for (ssize_t i = 0; i < got; ++i) {
    const ibv_gid_entry& e = entries[i];
    if (e.port_num < 1 || e.port_num > f.ports.size()) continue;
    f.ports[e.port_num - 1].gids.push_back(PortGid{.index = static_cast<int>(e.gid_index),
                                                   .gid = gidText(e.gid),
                                                   .type = gidType(e.gid_type),
                                                   .ndev = ifName(e.ndev_ifindex)});
  }
  for (auto& p : f.ports) {
    std::sort(p.gids.begin(), p.gids.end(),
              [](const PortGid& a, const PortGid& b) { return a.index < b.index; });
  }
  return f;
}

}  // namespace rdmanet
