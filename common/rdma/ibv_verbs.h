#pragma once
// IbvRdmaVerbs: RdmaVerbs over libibverbs (rdma-core). Each query opens the device
// (ibv_open_device, which needs read/write access to its /dev/infiniband/uverbsN), reads
// ibv_query_device for the port count, ibv_query_port per port and ibv_query_gid_table for the
// GIDs with their type and netdev ifindex, and closes it again: nothing is held between calls,
// so a device that vanishes (a Soft-RoCE device whose netdev left) costs one failed query.
//
// Thread-compatible: one instance per thread. The netdev names come from if_indextoname() in
// the caller's network namespace.

#include <memory>

#include "common/rdma/rdma_verbs.h"

namespace rdmanet {

class IbvRdmaVerbs final : public RdmaVerbs {
 public:
  Result<std::vector<std::string>> devices() override;
  Result<DeviceFacts> query(const std::string& device) override;
};

}  // namespace rdmanet
