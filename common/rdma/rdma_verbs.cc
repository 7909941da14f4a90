#include "common/rdma/rdma_verbs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/base/enum_names.h"

namespace rdmanet {

namespace {

// drivers/infiniband/core/sysfs.c prints ib_cache_gid_type_str(): "IB/RoCE v1" or "RoCE v2".
// The first spelling of a type is its name; "RoCE v1" is read too.
constexpr EnumName<GidType> kGidTypes[] = {{"IB", GidType::kIb},
                                           {"IB/RoCE v1", GidType::kRoceV1},
                                           {"RoCE v1", GidType::kRoceV1},
                                           {"RoCE v2", GidType::kRoceV2}};

}  // namespace

std::string_view gidTypeName(GidType t) { return nameOf<GidType>(kGidTypes, t, "unknown"); }

GidType parseGidType(std::string_view s) {
  return enumOf<GidType>(kGidTypes, s).value_or(GidType::kUnknown);
}

std::string_view factSourceName(FactSource s) {
  return s == FactSource::kVerbs ? "verbs" : "sysfs";
}

int ibMtuBytes(int e) { return e >= 1 && e <= 5 ? 128 << e : 0; }

int roceMtuForNetdevMtu(int netdev_mtu, int max_mtu) {
  // include/rdma/ib_addr.h iboe_get_mtu(): GRH + UDP + BTH + XRC ext + AtomicETH + ICRC.
  constexpr int kRoceHeaders = 40 + 8 + 12 + 4 + 28 + 4;
  const int room = netdev_mtu - kRoceHeaders;
  int best = 0;
  for (int b = 256; b <= 4096; b *= 2) {
    if (b <= room && (max_mtu <= 0 || b <= max_mtu)) best = b;
  }
  return best;
}

double ibSpeedGbps(int s) {
  // enum ibv_port_attr.active_speed (<infiniband/verbs.h> / IBTA): per-lane signalling after
  // encoding.
  switch (s) {
    case 1:
      return 2.5;  // SDR
    case 2:
      return 5.0;  // DDR
    case 4:
    case 8:
      return 10.0;  // QDR, FDR10
    case 16:
      return 14.0;  // FDR
    case 32:
      return 25.0;  // EDR
    case 64:
      return 50.0;  // HDR
    case 128:
      return 100.0;  // NDR
    default:
      return 0;
  }
}

int ibWidthLanes(int w) {
  switch (w) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

std::optional<double> parseRateGbps(std::string_view rate) {
  // drivers/infiniband/core/sysfs.c rate_show(): "%d%s Gb/sec (%dX%s)", e.g. "2.5 Gb/sec (1X
  // SDR)" or "100 Gb/sec (4X EDR)".
  const auto sp = rate.find(" Gb/sec");
  if (sp == std::string_view::npos || sp == 0) return std::nullopt;
  double v = 0;
  // NOLINTNEXTLINE(bugprone-suspicious-stringview-data-usage): from_chars reads [data, data+sp)
  auto [p, ec] = std::from_chars(rate.data(), rate.data() + sp, v);
  if (ec != std::errc() || p != rate.data() + sp) return std::nullopt;
  return v;
}

DeviceFacts factsFromSysfs(const Sysfs& sysfs, const RdmaDevice& dev) {
  DeviceFacts f{.name = dev.name, .source = FactSource::kSysfs};
  for (const auto& p : dev.ports) {
    PortFacts pf{
        .num = p.num, .state = p.state, .state_num = p.state_num, .link_layer = p.link_layer};
    const std::string rate =
        sysfs.readOpt(fmt::format("/sys/class/infiniband/{}/ports/{}/rate", dev.name, p.num))
            .value_or("");
    pf.rate = rate;
    pf.rate_gbps = parseRateGbps(rate).value_or(0);
    for (const auto& g : p.gids) {
      pf.gids.push_back(
          PortGid{.index = g.index, .gid = g.gid, .type = parseGidType(g.type), .ndev = g.ndev});
    }
    f.ports.push_back(std::move(pf));
  }
  return f;
}

DeviceFacts rdmaFacts(RdmaVerbs* verbs, const Sysfs& sysfs, const RdmaDevice& dev) {
  std::string why = "no verbs access";
  if (verbs) {
    auto r = verbs->query(dev.name);
    if (r.ok()) return std::move(r).value();
    why = r.error().msg;
  }
  DeviceFacts f = factsFromSysfs(sysfs, dev);
  f.fallback_reason = std::move(why);
  return f;
}

}  // namespace rdmanet
