#include "deviceplugin/daemon/front_wiring.h"

#include <chrono>

namespace rdmanet::dp {

Front* FrontWiring::front() const {
  if (dra.front) return dra.front.get();
  return device_plugin.get();
}

Result<FrontWiring> makeFrontWiring(const Flags& flags, const char* env_node_name,
                                    const Clock& clock, Metrics& metrics) {
  FrontWiring w;
  if (flags.api == "dra") {
    RDMANET_ASSIGN_OR_RETURN(w.dra, makeDraWiring(flags, env_node_name, clock, &metrics));
    return w;
  }
  w.endpoints = makeGrpcEndpointFactory();
  w.registrar = makeGrpcRegistrar(std::chrono::seconds(3));
  w.device_plugin = std::make_unique<DevicePluginFront>(
      DevicePluginFrontOptions{
          .kubelet_dir = flags.kubelet_dir,
          .pool = {.devinfo_dir = flags.devinfo_dir, .cdi_dir = flags.cdi_dir, .cdi = flags.cdi}},
      DevicePluginFrontDeps{.clock = &clock,
                            .endpoints = w.endpoints.get(),
                            .registrar = w.registrar.get(),
                            .metrics = &metrics});
  return w;
}

}  // namespace rdmanet::dp
