#include "common/net/rdma_nldev_codec.h"

#include <rdma/rdma_netlink.h>

#include "common/net/nlattr_view.h"

namespace rdmanet {

std::optional<RdmaDevEntry> parseRdmaDevice(std::span<const uint8_t> attrs) {
  auto n = nlattr::find(attrs, RDMA_NLDEV_ATTR_DEV_NAME);
  auto i = nlattr::find(attrs, RDMA_NLDEV_ATTR_DEV_INDEX);
  if (!n || !i || !i->as<uint32_t>()) return std::nullopt;
  return RdmaDevEntry{.name = n->str(), .index = *i->as<uint32_t>()};
}

RdmaLink parseRdmaPort(std::span<const uint8_t> attrs, const std::string& device) {
  RdmaLink l;
  l.device = device;
  if (auto a = nlattr::find(attrs, RDMA_NLDEV_ATTR_PORT_INDEX)) {
    l.port = a->as<uint32_t>().value_or(0);
  }
  if (auto a = nlattr::find(attrs, RDMA_NLDEV_ATTR_NDEV_INDEX)) {
    l.netdev_ifindex = static_cast<int>(a->as<uint32_t>().value_or(0));
  }
  if (auto a = nlattr::find(attrs, RDMA_NLDEV_ATTR_NDEV_NAME)) l.netdev = a->str();
  return l;
}

std::optional<uint8_t> parseRdmaNetnsMode(std::span<const uint8_t> attrs) {
  auto a = nlattr::find(attrs, RDMA_NLDEV_SYS_ATTR_NETNS_MODE);
  if (!a) return std::nullopt;
  return a->as<uint8_t>();
}

std::map<std::string, uint64_t> parseRdmaHwCounters(std::span<const uint8_t> attrs) {
  std::map<std::string, uint64_t> out;
  auto table = nlattr::find(attrs, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  if (!table) return out;
  nlattr::Walker entries(table->payload);
  while (auto e = entries.next()) {
    if (e->type != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY) continue;
    auto name = nlattr::find(e->payload, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME);
    auto value = nlattr::find(e->payload, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE);
    if (!name || !value || !value->as<uint64_t>() || name->str().empty()) continue;
    out[name->str()] = *value->as<uint64_t>();
  }
  return out;
}

}  // namespace rdmanet
