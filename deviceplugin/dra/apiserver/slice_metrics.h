#pragma once
// The ResourceSlice side's series on /metrics (Prometheus text 0.0.4):
//   rdmanet_dra_slice_generation                   gauge: the pool generation last published
//   rdmanet_dra_slice_publish_failures_total       counter: publishes that failed (retried)
//   rdmanet_dra_api_field_dropped{field,gate}      gauge: 1 while the API server drops a field we
//                                                  write because its feature gate is off
// The last one is how an admin learns, without reading logs, that unhealthy devices stay
// schedulable (field "taints", gate DRADeviceTaints) or that shared pools are not shared
// (field "allowMultipleAllocations").

#include <string>

#include "deviceplugin/dra/apiserver/slice_worker.h"

namespace rdmanet::dp {

std::string renderSliceMetrics(const SliceWorkerStatus& status);

}  // namespace rdmanet::dp
