#pragma once
// The one front a node runs (KEP-5004), as --api chose it, with what it needs kept alive for as
// long as it: the device-plugin front (v1beta1) with its gRPC endpoints and kubelet registrar,
// or the DRA front with its API-server side (dra_wiring.h). Only the chosen front is built.

#include <memory>

#include "deviceplugin/daemon/dra_wiring.h"
#include "deviceplugin/daemon/flags.h"
#include "deviceplugin/front/front.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/v1beta1/device_plugin_front.h"

namespace rdmanet::dp {

struct FrontWiring {
  // --api device-plugin. Declared in use order, so the front goes before what it uses.
  std::unique_ptr<EndpointFactory> endpoints{};
  std::unique_ptr<KubeletRegistrar> registrar{};
  std::unique_ptr<DevicePluginFront> device_plugin{};
  // --api dra.
  DraWiring dra{};

  // The front the daemon drives: the one that was built.
  Front* front() const;
};

// `env_node_name` is $NODE_NAME (null when unset), read by the DRA front only. The device-plugin
// front cannot fail to build; the DRA front's errors are makeDraWiring's (dra_wiring.h).
Result<FrontWiring> makeFrontWiring(const Flags& flags, const char* env_node_name,
                                    const Clock& clock, Metrics& metrics);

}  // namespace rdmanet::dp
