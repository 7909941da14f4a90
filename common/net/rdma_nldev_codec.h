#pragma once
// Pure decoders for RDMA netlink (NETLINK_RDMA, the nldev client) replies: attribute bytes ->
// domain values. nldev messages have no family header: the attributes start right after struct
// nlmsghdr. Kept apart from the libnl requests in rdma_netlink.cc so that the fuzz tests run the
// real decoding over bytes. Bounds-checked: truncated or malformed attributes are skipped.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "common/net/netlink.h"

namespace rdmanet {

// One entry of an RDMA_NLDEV_CMD_GET dump.
struct RdmaDevEntry {
  std::string name;
  uint32_t index = 0;
};

// The device of an RDMA_NLDEV_CMD_GET reply; nullopt without a name or a u32 index.
std::optional<RdmaDevEntry> parseRdmaDevice(std::span<const uint8_t> attrs);
// One port of an RDMA_NLDEV_CMD_PORT_GET reply, of `device`. Absent attributes stay zero/empty.
RdmaLink parseRdmaPort(std::span<const uint8_t> attrs, const std::string& device);
// RDMA_NLDEV_SYS_ATTR_NETNS_MODE of an RDMA_NLDEV_CMD_SYS_GET reply (1 = shared, 0 = exclusive);
// nullopt when absent or empty.
std::optional<uint8_t> parseRdmaNetnsMode(std::span<const uint8_t> attrs);
// The hw counters of an RDMA_NLDEV_CMD_STAT_GET reply for a port (RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
// entries of a name and a u64 value), by name. Entries without both are skipped.
std::map<std::string, uint64_t> parseRdmaHwCounters(std::span<const uint8_t> attrs);

}  // namespace rdmanet
