// libFuzzer target over the device plugin's pool config (deviceplugin/pools/config.h): the input
// is the config document (seeds: sriov-network-device-plugin's and k8s-rdma-shared-dev-plugin's
// formats, and rdmanet's keys). Invariants: no crash, no exception; a config that parses has
// named pools, each the same as itself for hot reload.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "deviceplugin/pools/config.h"

using namespace rdmanet::dp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto c = parseConfig(text);
  if (!c.ok()) return 0;
  for (const auto& p : c->pools) {
    if (p.resource_name.empty() || !p.sameAs(p)) __builtin_trap();
    (void)p.fullName();
  }
  // A pfNames / rootDevices entry on its own, as both kinds.
  (void)parseDeviceRef(text, /*is_address=*/false, "pfNames[0]");
  (void)parseDeviceRef(text, /*is_address=*/true, "rootDevices[0]");
  return 0;
}
