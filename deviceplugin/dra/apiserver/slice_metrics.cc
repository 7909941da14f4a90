#include "deviceplugin/dra/apiserver/slice_metrics.h"

#include "common/base/prometheus_text.h"
#include "deviceplugin/dra/dra_device.h"

namespace rdmanet::dp {

std::string renderSliceMetrics(const SliceWorkerStatus& status) {
  PrometheusText out;
  out.single("rdmanet_dra_slice_generation", "gauge",
             "Generation of this node's ResourceSlice pool as last published.", status.generation);
  out.single("rdmanet_dra_slice_publish_failures_total", "counter",
             "ResourceSlice publishes that failed and were retried.", status.failures);
  out.family("rdmanet_dra_api_field_dropped", "gauge",
             "1 while the API server drops a field rdmanet writes, because the named feature "
             "gate is off.");
  out.sample("rdmanet_dra_api_field_dropped",
             {{"field", "taints"}, {"gate", dra::kDeviceTaintsGate}}, int{status.taints_dropped});
  out.sample("rdmanet_dra_api_field_dropped",
             {{"field", "allowMultipleAllocations"}, {"gate", dra::kConsumableCapacityGate}},
             int{status.multiple_allocations_dropped});
  out.sample("rdmanet_dra_api_field_dropped",
             {{"field", "sharedCounters"}, {"gate", dra::kPartitionableDevicesGate}},
             int{status.partitions_dropped});
  return std::move(out).str();
}

}  // namespace rdmanet::dp
