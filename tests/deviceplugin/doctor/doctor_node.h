#pragma once
// DoctorNode: a simulated node for doctor tests. A topology written as a fake sysfs tree by
// the simnode builder (rdmanet_simnode), plus what the doctor reads beyond PCI: the CPU
// governor and cpuidle states, /proc/modules, RDMA counters (written by the builder), and a
// FakeKernel holding each data port's DCB state. Its defaults make a healthy node; tests break
// one thing each.

#include <gmock/gmock.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/sysfs.h"
#include "deviceplugin/doctor/doctor.h"
#include "tests/fakes/fake_netlink.h"
#include "tests/fakes/fake_rdma_verbs.h"
#include "tests/simnode/build_node.h"
#include "tests/simnode/sim_tree.h"
#include "tests/simnode/topology_model.h"

namespace rdmanet::doctor::testing {

// Two sockets; per socket one PCIe switch holding a dual-port RoCE NIC (2 VFs per port) and two
// GPUs, so every GPU has a PIX NIC on its NUMA node. NICs 200G, MTU 9000.
// Built names: ens1f0/ens1f1 (mlx5_0/mlx5_1, NUMA 0), ens2f0/ens2f1 (mlx5_6/mlx5_7, NUMA 1);
// GPUs 0000:04:00.0, 0000:05:00.0 (NUMA 0), 0000:84:00.0, 0000:85:00.0 (NUMA 1); switch
// downstream ports 0000:02:0{0,1,2}.0 and 0000:82:0{0,1,2}.0.
extern const char* const kHealthyTopology;

// JSON text of a repo topology file (hack/topologies/<name>).
std::string repoTopology(const std::string& name);

class DoctorNode {
 public:
  // Builds `topology_json` with every NIC set to `mtu` and `speed_mbps` (0: keep the JSON's),
  // 4 CPUs on the performance governor with only C1 enabled, nvidia_peermem loaded, healthy
  // DCB (PFC and DSCP 26 on priority 3, trust dscp) on every data port in the fake kernel,
  // global pause off, and MLNX_OFED's ECN files (RP and NP on for every priority, CNP DSCP 48
  // priority 6). Verbs answer for every RDMA device with what the tree says plus the RoCE
  // active MTU its netdev MTU gives (derived at each run, unless a test pinned the device).
  explicit DoctorNode(const std::string& topology_json = kHealthyTopology, int mtu = 9000,
                      int speed_mbps = 200000);
  ~DoctorNode();
  DoctorNode(const DoctorNode&) = delete;
  DoctorNode& operator=(const DoctorNode&) = delete;

  sim::SimTree& tree() { return *tree_; }
  const sim::BuiltNode& built() const { return built_; }
  const std::filesystem::path& root() const { return root_; }
  Sysfs sysfs() const { return Sysfs(root_); }
  FakeKernel& kernel() { return kernel_; }
  FakeNetlink& netlink() { return netlink_; }
  FakePauseReader& pause() { return pause_; }
  // Verbs answer `facts` for facts.name from now on (no longer derived from the tree).
  void pinVerbs(DeviceFacts facts);
  // Verbs cannot open `device` (errno `err`): the doctor falls back to sysfs.
  void failVerbs(const std::string& device, int err);
  // ECN enable files of `port` for `priority` (MLNX_OFED shape); remove: no ecn directory.
  void setEcn(const std::string& port, int priority, bool rp, bool np);
  void removeEcn(const std::string& port);
  // PF netdev names, in tree order.
  std::vector<std::string> dataPorts() const;

  // CPU and module state.
  void writeCpus(int n, const std::vector<std::string>& governors, bool deep_states_enabled);
  void writeModules(const std::vector<std::string>& modules);

  static DcbState healthyDcb(int priority = 3);
  void setDcb(const std::string& port, std::optional<DcbState> dcb);

  // Runs the doctor; `with_netlink` false passes no Netlink. `verbs` false passes no RdmaVerbs.
  DoctorReport run(const DoctorOptions& options = {}, const CounterSnapshot* baseline = nullptr,
                   bool with_netlink = true, int64_t now = 1000, bool verbs = true);

 private:
  std::filesystem::path root_;
  std::unique_ptr<sim::SimTree> tree_;
  sim::BuiltNode built_;
  FakeKernel kernel_;
  FakeNetlink netlink_{kernel_};
  FakePauseReader pause_;
  FakeRdmaVerbs verbs_;
  std::set<std::string> pinned_;  // devices whose verbs answer a test set
  void deriveVerbs();
};

// Every result that is not PASS, as "check device VERDICT" lines, for compact assertions.
std::vector<std::string> nonPass(const DoctorReport& r);

// One evidence value of a result, or a "<no ...>" marker that makes a failed assertion readable.
std::string ev(const CheckResult* r, std::string_view key);

}  // namespace rdmanet::doctor::testing

// The names every doctor check test uses; a test file says
// `using namespace testing::prelude;` in its anonymous namespace instead of repeating them.
namespace rdmanet::doctor::testing::prelude {
using ::rdmanet::doctor::testing::DoctorNode;
using ::rdmanet::doctor::testing::ev;
using ::rdmanet::doctor::testing::nonPass;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
}  // namespace rdmanet::doctor::testing::prelude
