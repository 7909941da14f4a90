#pragma once
// A node for plugin unit tests: a fake kernel (tests/fakes) and a matching fake sysfs tree
// (tests/simnode SimTree), a scripted IPAM, and helpers to run whole invocations through
// runCni() exactly as the binary does.
//
// The node: PF 0000:81:00.0 "ens1f0" (4 VFs; VF0 0000:81:10.0 "ens1f0v0" with RDMA mlx5_1 whose
// RoCE v2 GID table holds 10.56.0.2, VF1 0000:81:10.2 "ens1f0v1"), PF RDMA mlx5_0, DCB with PFC
// on priority 3 (PCP trust); a plain NIC 0000:82:00.0 "ens2f0"; pod netns "pod1" and "pod2".
// Physical netdevs report their PCI function as parent device; RDMA netns mode is exclusive.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cni/conf/json_util.h"
#include "cni/conf/logger.h"
#include "cni/ipam/ipam.h"
#include "cni/plugin.h"
#include "tests/fakes/fake_netlink.h"
#include "tests/simnode/sim_tree.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni::testing {

// An IPAM delegate answering from a script: ADD returns `result` (or `fail`), the rest succeed.
class FakeIpam : public IpamExecutor {
 public:
  Result<ExecOutput> exec(const ExecRequest& req) override;

  json result = json::parse(R"({"cniVersion": "1.0.0",
      "ips": [{"address": "10.56.0.2/24", "gateway": "10.56.0.1"}],
      "routes": [{"dst": "10.57.0.0/16"}], "dns": {"nameservers": ["10.56.0.1"]}})");
  std::optional<json> fail;                  // error JSON for ADD
  std::vector<std::string> max_version_for;  // unused placeholder
  std::string highest = "1.0.0";             // versions above this answer code 1
  std::vector<ExecRequest> calls;
  std::map<std::string, int> live;  // containerid_ifname -> leases held
  int count(const std::string& command) const;

 private:
  // Calls from several threads (SharedVlanConcurrencyTest: each thread plays one plugin process)
  // take turns, as the real IPAM plugin's processes do on its lock; unguarded, `calls` grew from
  // two threads at once and corrupted the heap (a SIGABRT about 1 run in 10 under load).
  mutable std::mutex mu_;
};

// Everything a test needs; usable on its own (fresh nodes in a loop) or as a fixture.
class TestNode {
 public:
  TestNode();
  ~TestNode();
  TestNode(const TestNode&) = delete;
  TestNode& operator=(const TestNode&) = delete;

  static constexpr const char* kPod = "/var/run/netns/pod1";
  static constexpr const char* kPod2 = "/var/run/netns/pod2";

  // Runs one invocation through runCni with the usual environment.
  Invocation invoke(const std::string& command, const std::string& conf,
                    const std::string& netns = kPod, const std::string& cid = "c1",
                    const std::string& ifname = "net1",
                    std::map<std::string, std::string> extra_env = {});
  // ADD that must succeed; returns the parsed stdout.
  json addOk(const std::string& conf, const std::string& netns = kPod,
             const std::string& cid = "c1", const std::string& ifname = "net1");
  // The same netconf with prevResult set (what a runtime sends on CHECK/DEL).
  static std::string withPrev(const std::string& conf, const json& prev);

  // The node's boot id as ADD and DEL read it (a new one is a reboot).
  void setBootId(const std::string& id);

  // True when, in the kernel call log after position `mark`, every VF knob set through the PF
  // came before the first netdev move (the order PF drivers need on DEL); false if either is
  // missing.
  bool vfKnobsBeforeMove(size_t mark) const;

  // A comparable picture of everything ADD may touch.
  struct World {
    std::vector<std::string> host_links;  // "name/mtu/mac/up/kind"
    std::vector<std::string> pod_links;
    std::vector<VfInfo> vfs;
    std::vector<std::string> rdma;         // "dev@ns"
    std::vector<std::string> state_files;  // state, lock, temp and device-info files
    std::map<std::string, int> leases;
    bool operator==(const World&) const = default;
  };
  World world() const;

  // The device plugin's DRA records (deviceplugin/dra/kubelet/pod_devices.h), beneath the node's
  // draDevicesRoot: a network's "draDevicesDir".
  std::filesystem::path draRecords() const { return tmp_.path() / "dra-devices"; }
  // Writes the record of claim `claim_uid` of pod `pod_uid` holding `devices`.
  void writeDraRecord(const std::string& pod_uid, const std::string& claim_uid,
                      const json& devices) const;
  // One device entry of a record; `extra` members (e.g. "maxTxRateMbps") are merged in.
  static json draDevice(const std::string& resource, const std::string& pci,
                        const json& extra = json::object());
  // Everything logged so far.
  std::string logText() const;

  std::string sriovConf(const std::string& extra = "") const;
  std::string macvlanConf(const std::string& extra = "") const;
  std::string hostDeviceConf(const std::string& extra = "") const;

  sim::TempDir tmp_{"rdmanet-cni-test"};
  std::unique_ptr<sim::SimTree> tree_;
  FakeKernel kernel_;
  FakeNetnsRunner runner_{kernel_};
  FakeNetlink host_{kernel_};
  FakeIpam ipam_;
  Logger log_;
  std::FILE* log_sink_ = nullptr;
  std::unique_ptr<PluginDeps> deps_;
  int pf_ifindex_ = 0;
};

class PluginTest : public ::testing::Test, public TestNode {};

std::string dumpWorld(const TestNode::World& w);

}  // namespace rdmanet::cni::testing
