#pragma once
// The largest bandwidth rdmanet takes anywhere, in Mbit/s: 10 Tbit/s, far above any port, and far
// below where bit/s overflow int64. One bound for both ends of a VF's share: the daemon refuses a
// pool's vfBandwidthMbps or claimBandwidthMbps above it (deviceplugin/pools/config.h), and the
// CNI the "maxTxRateMbps" a DRA record gives a device (cni/modes/claimed_device.h), so what the
// daemon accepts the CNI takes.

#include <cstdint>

namespace rdmanet {

inline constexpr int64_t kMaxBandwidthMbps = 10'000'000;

}  // namespace rdmanet
