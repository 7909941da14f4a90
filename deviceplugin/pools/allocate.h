#pragma once
// What Allocate hands kubelet for one container, as plain data (the gRPC layer copies it into
// ContainerAllocateResponse).
//
// For the allocated devices only:
// - device nodes: /dev/infiniband/uverbsN, umadN, issmN of each device's RDMA device (as sysfs
//   lists them) plus /dev/infiniband/rdma_cm once, all "rw";
// - env PCIDEVICE_<PREFIX>_<NAME>: the comma-separated PCI addresses of the allocated functions
//   (a shared pool's slots name their PF), and PCIDEVICE_<PREFIX>_<NAME>_INFO: per device ID,
//   the sriov-network-device-plugin JSON: {"<id>": {"generic": {"deviceID": ...},
//   "rdma": {"rdma_dev", "uverbs", "umad", "issm", "rdma_cm"}, and, when the device's port has
//   an LLDP neighbour, rdmanet's "rdmanet": {"rail", "switch", "switchPort"}}};
// - PCIDEVICE_<PREFIX>_<NAME>_RAILS: the rail of each function of PCIDEVICE_<PREFIX>_<NAME>, by
//   position ("" where unknown), when any is known: ranks that pick the NIC of their rail;
// - NCCL hints: NCCL_IB_HCA ("=mlx5_2,mlx5_3": '=' makes NCCL match names exactly, or mlx5_1
//   would also select mlx5_10), NCCL_IB_TC (DSCP << 2, the TOS byte NCCL puts in the GRH) and
//   NCCL_IB_SL (the priority) from the pool's `lossless`, and NCCL_NET_GDR_LEVEL when every
//   device is at most PXB from a GPU (GPUDirect RDMA through the host bridge is slow or refused
//   on most root complexes, so PHB and farther leave NCCL's default);
// - with the pool's podInfoDir: each device's directory <podInfoDir>/<PCI address>, which the CNI
//   fills at ADD (cni/pod/pod_info.h), mounted read-only at /var/run/rdmanet/<PCI address>, and
//   PCIDEVICE_<PREFIX>_<NAME>_POD_INFO naming those container paths (comma-separated);
// - with CDI: the names "<prefix>/<name>=<id>" of the devices in the pool's CDI spec, and no
//   device nodes (the runtime injects them from the spec; giving both would create them twice).

#include <map>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {

inline constexpr std::string_view kRdmaCmPath = "/dev/infiniband/rdma_cm";

struct DeviceNode {
  std::string container_path{};
  std::string host_path{};
  std::string permissions{};
  // The character device's numbers, as sysfs gives them; 0 when unknown (rdma_cm). Kubelet's
  // DeviceSpec has no room for them; a CDI spec carries them (pools/cdi.h).
  int major = 0;
  int minor = 0;
  bool operator==(const DeviceNode&) const = default;
};

// The node a container gets for one of a device's character devices, and for rdma_cm: "rw",
// at the host's path.
DeviceNode charDeviceNode(const CharDevice& c);
DeviceNode rdmaCmNode();

// A bind mount into the container (the pool's podInfoDir, one directory per device).
struct Mount {
  std::string container_path{};
  std::string host_path{};
  bool read_only = true;
  bool operator==(const Mount&) const = default;
};

// Where a device's pod-info directory appears in the container: /var/run/rdmanet/<PCI address>.
inline constexpr std::string_view kPodInfoMountRoot = "/var/run/rdmanet";

struct ContainerAllocation {
  std::map<std::string, std::string> envs{};
  std::vector<DeviceNode> devices{};
  std::vector<Mount> mounts{};
  std::vector<std::string> cdi_devices{};
};

struct AllocateOptions {
  bool cdi = false;
};

// "PCIDEVICE_RDMA_VF": upper-cased, with every character outside [A-Z0-9_] made '_'.
std::string envName(const PoolConfig& cfg);

// Checks that `id` is shaped like an ID we hand out (printable, no '/', at most 63 bytes).
bool isWellFormedId(std::string_view id);

// Builds one container's allocation. Errors (code chosen for the gRPC mapping):
// - 7 (INVALID_ARGUMENT): no IDs, a malformed ID, a duplicate ID;
// - 100 (NOT_FOUND): an ID not in the pool;
// - 11 (UNAVAILABLE): an unhealthy device.
Result<ContainerAllocation> buildAllocation(const Pool& pool, const std::vector<std::string>& ids,
                                            const AllocateOptions& opts);

// The distance name NCCL_NET_GDR_LEVEL gets for these devices, or "" when GPUDirect should not
// be forced (some device farther than PXB, or no GPU known).
std::string gdrLevel(const std::vector<const PoolDevice*>& devs);

}  // namespace rdmanet::dp
