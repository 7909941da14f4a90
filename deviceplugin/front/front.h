#pragma once
// Front: one kubelet API served over the core's pools (the device-plugin API, or DRA). The
// daemon loop owns the core (pools/node_pools.h) and exactly one front (KEP-5004 forbids
// serving one extended resource both ways on a node), and drives it from its thread:
//
//   start()                          once, before anything else;
//   apply(config, pools)             after every change of membership, health or config;
//   fds() / onReadable(fd)           the front's own event sources, polled by the loop;
//   nextDeadline() / runTimers(now)  its timers, on the loop's clock (tests drive it);
//   stop()                           once, on the way out.
//
// No method may block for long: a slow peer (kubelet, the API server) is talked to on the
// front's own threads, whose results come back through one of its fds.

#include <optional>
#include <string_view>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {

class Front {
 public:
  virtual ~Front() = default;
  // "deviceplugin" or "dra", for logs.
  virtual std::string_view name() const = 0;
  // Error 5 when a socket or directory the front needs cannot be set up at all.
  virtual Status start() = 0;
  virtual void apply(const PluginConfig& config, const std::vector<Pool>& pools) = 0;
  virtual std::vector<int> fds() const = 0;
  virtual void onReadable(int fd) = 0;
  virtual std::optional<Clock::time_point> nextDeadline() const = 0;
  virtual void runTimers(Clock::time_point now) = 0;
  // Registered with kubelet: /readyz, and the start of background work (the doctor).
  virtual bool ready() const = 0;
  virtual void stop() = 0;
};

}  // namespace rdmanet::dp
