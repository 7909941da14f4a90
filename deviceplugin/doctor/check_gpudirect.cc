// GPUDirect RDMA: with GPUs present, is a peer-memory module loaded (nvidia_peermem, or the
// older out-of-tree nv_peer_mem)? Without one (and without the dma-buf path) NCCL stages every
// transfer through host memory.
#include <fmt/format.h>

#include <set>
#include <sstream>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

constexpr const char* kPeerModules[] = {"nvidia_peermem", "nv_peer_mem"};

}  // namespace

void checkGpuDirect(const DoctorContext& ctx, DoctorReport& out) {
  if (ctx.gpus.empty()) return;
  const auto modules = ctx.sysfs.readOpt("/proc/modules");
  std::set<std::string> loaded;
  if (modules) {
    std::istringstream in(*modules);
    std::string line;
    while (std::getline(in, line)) loaded.insert(line.substr(0, line.find(' ')));
  }
  const std::string gpus = std::to_string(ctx.gpus.size());
  for (const char* m : kPeerModules) {
    if (loaded.count(m) || ctx.sysfs.exists(std::string("/sys/module/") + m)) {
      out.results.push_back(
          makeResult("gpudirect", "node", Verdict::kPass, {{"gpus", gpus}, {"peer_module", m}}));
      return;
    }
  }
  if (!modules && !ctx.sysfs.exists("/sys/module")) {
    out.results.push_back(makeResult(
        "gpudirect", "node", Verdict::kUnknown,
        {{"gpus", gpus}, {"peer_module", "unknown (/proc/modules and /sys/module unreadable)"}},
        "check by hand: lsmod | grep nvidia_peermem"));
    return;
  }
  out.results.push_back(
      makeResult("gpudirect", "node", Verdict::kWarn,
                 {{"gpus", gpus},
                  {"peer_module", "not loaded"},
                  {"nvidia", loaded.count("nvidia") ? "loaded" : "not loaded"}},
                 "modprobe nvidia_peermem (or use NCCL's dma-buf path, kernel >= 5.12 and open GPU "
                 "driver); without GPUDirect RDMA bandwidth is low and CPU load high"));
}

}  // namespace rdmanet::doctor
