#pragma once
// DevicePublisher: the seam between DRA's two sides. The DraFront (kubelet side) hands it every
// change of the node's devices; the API-server side (apiserver/slice_worker.h) publishes them as
// ResourceSlices. Its own header so that the publisher need not include the front it serves.

#include <memory>

#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

// Where the desired devices go to be published as ResourceSlices (the API-server side of DRA).
class DevicePublisher {
 public:
  virtual ~DevicePublisher() = default;
  // Called on the loop's thread after every change; must not block (publish on its own thread).
  // `allow_multiple_allocations`: shareable devices may be allocated to many claims (KEP-5075).
  virtual void publish(std::shared_ptr<const DeviceSnapshot> inv,
                       bool allow_multiple_allocations) = 0;
};

}  // namespace rdmanet::dp
