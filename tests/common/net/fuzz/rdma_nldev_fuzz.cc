// libFuzzer target over the RDMA netlink decoders (common/net/rdma_nldev_codec.h): the input is
// the attributes of an nldev reply (RDMA_NLDEV_CMD_GET, _PORT_GET, _SYS_GET or _STAT_GET; seeds
// built from the <rdma/rdma_netlink.h> layout, make_seeds.py), fed to each decoder. Invariant: no
// crash, no read out of bounds; a port keeps the device it was asked for.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/net/rdma_nldev_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  (void)rdmanet::parseRdmaDevice(bytes);
  if (rdmanet::parseRdmaPort(bytes, "mlx5_0").device != "mlx5_0") __builtin_trap();
  (void)rdmanet::parseRdmaNetnsMode(bytes);
  (void)rdmanet::parseRdmaHwCounters(bytes);
  return 0;
}
