#pragma once
// What every check sees: the inventory, the node's data ports and GPUs with their display
// labels, the options and the kernel seams. Internal to the doctor library.
//
// A data port is a physical function of an RDMA NIC: a network-class PF (not a VF) that has an
// RDMA device, or a Mellanox/NVIDIA (15b3) PF that should have one but does not (mlx5_ib not
// loaded), so the RDMA check can say so. VFs are not data ports: they belong to pods, and in
// exclusive RDMA netns mode they are not even visible here.

#include <optional>
#include <string>
#include <vector>

#include "common/base/sysfs.h"
#include "common/inventory/node.h"
#include "common/net/netlink.h"
#include "common/net/pause.h"
#include "common/rdma/rdma_verbs.h"
#include "deviceplugin/doctor/doctor.h"
#include "deviceplugin/doctor/report.h"

namespace rdmanet::doctor {

struct DataPort {
  const NicFunction* nic = nullptr;
  const Netdev* netdev = nullptr;    // first netdev of the function, nullptr if none
  const RdmaDevice* rdma = nullptr;  // first RDMA device of the function, nullptr if none
  std::string label{};               // netdev name, else the BDF
  std::string rdma_label{};          // "mlx5_0", else the label
  DeviceFacts facts{};  // of `rdma` (verbs, else sysfs); empty name when there is no `rdma`
};

struct GpuRef {
  const GpuFunction* gpu = nullptr;
  std::string label{};  // "GPU0", by PCI address order like nvidia-smi
};

struct DoctorContext {
  const Sysfs& sysfs;
  const NodeInventory& inv;
  const DoctorOptions& options;
  Netlink* netlink = nullptr;
  RdmaVerbs* verbs = nullptr;
  PauseReader* pause = nullptr;
  const CounterSnapshot* baseline = nullptr;
  int64_t now_unix = 0;
  std::vector<DataPort> ports{};
  std::vector<GpuRef> gpus{};
};

// The node's data ports and GPUs, labelled (pointers into `inv`, which must outlive them).
void collectDevices(const NodeInventory& inv, std::vector<DataPort>& ports,
                    std::vector<GpuRef>& gpus);

// A port with an Ethernet netdev (RoCE): the one kind MTU and DCB checks apply to.
inline bool isEthernet(const DataPort& p) {
  return p.netdev && p.netdev->link_type != LinkType::kInfiniband;
}

// What checkLossless found for a port's lossless priority: true PFC on, false off, nullopt
// unknown (no DCB read).
std::optional<bool> pfcOn(const DoctorReport& out, const DataPort& p);

// How results (and the counter snapshots' keys) name an RDMA port: "mlx5_0/1".
std::string rdmaPortName(const std::string& rdma_device, int port);

// Builds a result; `evidence` in reading order.
CheckResult makeResult(std::string check, std::string device, Verdict v,
                       std::vector<Evidence> evidence, std::string remedy = {});

// Joins values with `sep`: join({"a","b"}, ",") == "a,b".
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// One function per check concept (one .cc each). Each appends its results to `out`.
void checkLinks(const DoctorContext& ctx, DoctorReport& out);
void checkRdmaPorts(const DoctorContext& ctx, DoctorReport& out);
void checkMtu(const DoctorContext& ctx, DoctorReport& out);
void checkLossless(const DoctorContext& ctx, DoctorReport& out);
// These two read the "pfc" results checkLossless appended (PASS: PFC on, FAIL: off, UNKNOWN),
// so they run after it and read no DCB themselves.
void checkPause(const DoctorContext& ctx, DoctorReport& out);
void checkEcn(const DoctorContext& ctx, DoctorReport& out);
void checkMtuChain(const DoctorContext& ctx, DoctorReport& out);
void checkNuma(const DoctorContext& ctx, DoctorReport& out);
void checkTopology(const DoctorContext& ctx, DoctorReport& out);  // also fills out.matrix
void checkAcs(const DoctorContext& ctx, DoctorReport& out);
void checkGpuDirect(const DoctorContext& ctx, DoctorReport& out);
void checkCpu(const DoctorContext& ctx, DoctorReport& out);
void checkCounters(const DoctorContext& ctx, DoctorReport& out);  // also fills counters/deltas

}  // namespace rdmanet::doctor
