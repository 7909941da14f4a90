#include "tests/deviceplugin/doctor/doctor_node.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rdmanet::doctor::testing {

namespace fs = std::filesystem;

const char* const kHealthyTopology = R"({
  "name": "healthy",
  "host_bridges": [
    { "domain": 0, "bus": "0x00", "numa_node": 0,
      "root_ports": [ { "switch": { "downstream": [
        { "nic": { "name": "ens1", "ports": 2, "vfs_per_port": 2, "total_vfs": 4 } },
        { "gpu": {} }, { "gpu": {} } ] } } ] },
    { "domain": 0, "bus": "0x80", "numa_node": 1,
      "root_ports": [ { "switch": { "downstream": [
        { "nic": { "name": "ens2", "ports": 2, "vfs_per_port": 2, "total_vfs": 4 } },
        { "gpu": {} }, { "gpu": {} } ] } } ] }
  ]
})";

namespace {

fs::path makeRoot() {
  // tmpfs when there is one: a node is hundreds of small files.
  std::error_code ec;
  fs::path base =
      fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  std::string tmpl = (base / "rdmanet-doctor-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

void setNics(std::vector<sim::SlotModel>& slots, int mtu, int speed) {
  for (auto& s : slots) {
    if (s.kind == sim::SlotModel::Kind::kNic) {
      if (mtu) s.nic.mtu = mtu;
      if (speed) s.nic.speed_mbps = speed;
    }
    setNics(s.downstream, mtu, speed);
  }
}

}  // namespace

std::string repoTopology(const std::string& name) {
  std::ifstream in(fs::path(RDMANET_SOURCE_DIR) / "hack/topologies" / name);
  if (!in) throw std::runtime_error("no topology " + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

DoctorNode::DoctorNode(const std::string& topology_json, int mtu, int speed_mbps)
    : root_(makeRoot()) {
  auto topo = sim::parseTopology(topology_json);
  if (!topo.ok()) throw std::runtime_error("topology: " + topo.error().msg);
  for (auto& hb : topo->host_bridges) setNics(hb.root_ports, mtu, speed_mbps);
  tree_ = std::make_unique<sim::SimTree>(root_);
  auto built = sim::buildNode(*topo, *tree_);
  if (!built.ok()) throw std::runtime_error("buildNode: " + built.error().msg);
  built_ = std::move(built).value();
  writeCpus(4, {"performance"}, false);
  writeModules({"nvidia_peermem", "nvidia", "mlx5_ib", "mlx5_core"});
  for (const auto& port : dataPorts()) {
    FakeLinkSpec spec;
    spec.name = port;
    spec.mtu = static_cast<uint32_t>(mtu ? mtu : 1500);
    spec.up = true;
    kernel_.addLink(FakeKernel::kHost, spec);
    kernel_.setDcb(FakeKernel::kHost, port, healthyDcb());
    pause_.set(port, PauseState{});
    for (int prio = 0; prio < 8; ++prio) setEcn(port, prio, true, true);
    tree_->writeAttr("/sys/class/net/" + port + "/ecn/roce_np/cnp_dscp", "48");
    tree_->writeAttr("/sys/class/net/" + port + "/ecn/roce_np/cnp_802p_prio", "6");
  }
}

void DoctorNode::setEcn(const std::string& port, int priority, bool rp, bool np) {
  const std::string ecn = "/sys/class/net/" + port + "/ecn";
  tree_->writeAttr(fmt::format("{}/roce_rp/enable/{}", ecn, priority), rp ? "1" : "0");
  tree_->writeAttr(fmt::format("{}/roce_np/enable/{}", ecn, priority), np ? "1" : "0");
}

void DoctorNode::removeEcn(const std::string& port) {
  tree_->remove("/sys/class/net/" + port + "/ecn");
}

void DoctorNode::pinVerbs(DeviceFacts facts) {
  pinned_.insert(facts.name);
  verbs_.set(std::move(facts));
}

void DoctorNode::failVerbs(const std::string& device, int err) {
  pinned_.insert(device);
  verbs_.failOpen(device, err);
}

void DoctorNode::deriveVerbs() {
  // What libibverbs would say: sysfs's facts plus the active MTU the kernel derives from the
  // netdev MTU (max 4096, as mlx5 and rxe report).
  const Sysfs sysfs(root_);
  const NodeInventory inv = scanNode(sysfs);
  for (const auto& nic : inv.nics) {
    for (const auto& dev : nic.rdma) {
      if (pinned_.contains(dev.name)) continue;
      DeviceFacts f = factsFromSysfs(sysfs, dev);
      const int mtu = nic.netdevs.empty() ? 1500 : nic.netdevs.front().mtu;
      for (auto& p : f.ports) {
        p.max_mtu = 4096;
        if (p.link_layer == "Ethernet") p.active_mtu = roceMtuForNetdevMtu(mtu, 4096);
      }
      verbs_.set(std::move(f));
    }
  }
}

DoctorNode::~DoctorNode() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::vector<std::string> DoctorNode::dataPorts() const {
  std::vector<std::string> out;
  for (const auto& nd : built_.netdevs) {
    if (!nd.is_vf) out.push_back(nd.name);
  }
  return out;
}

void DoctorNode::writeCpus(int n, const std::vector<std::string>& governors,
                           bool deep_states_enabled) {
  const std::string base = "/sys/devices/system/cpu";
  tree_->remove(base);
  tree_->writeAttr(base + "/cpuidle/current_driver", "intel_idle");
  struct State {
    const char* name;
    int latency;
    bool deep;
  };
  const State states[] = {
      {"POLL", 0, false}, {"C1", 2, false}, {"C1E", 10, true}, {"C6", 133, true}};
  for (int c = 0; c < n; ++c) {
    const std::string cpu = fmt::format("{}/cpu{}", base, c);
    tree_->writeAttr(cpu + "/cpufreq/scaling_governor", governors[c % governors.size()]);
    for (size_t s = 0; s < std::size(states); ++s) {
      const std::string sd = fmt::format("{}/cpuidle/state{}", cpu, s);
      tree_->writeAttr(sd + "/name", states[s].name);
      tree_->writeAttr(sd + "/latency", std::to_string(states[s].latency));
      tree_->writeAttr(sd + "/disable", states[s].deep && !deep_states_enabled ? "1" : "0");
    }
  }
}

void DoctorNode::writeModules(const std::vector<std::string>& modules) {
  std::string text;
  for (const auto& m : modules) {
    text += fmt::format("{} 16384 0 - Live 0x0000000000000000\n", m);
  }
  tree_->writeAttr("/proc/modules", text);
}

DcbState DoctorNode::healthyDcb(int priority) {
  DcbState s;
  s.supported = true;
  s.pfc_cap = 8;
  s.pfc_enabled = static_cast<uint8_t>(1 << priority);
  s.apps.push_back(
      DcbApp{.selector = 5, .priority = static_cast<uint8_t>(priority), .protocol = 26});
  s.apps.push_back(DcbApp{.selector = 5, .priority = 6, .protocol = 48});  // CNPs
  return s;
}

void DoctorNode::setDcb(const std::string& port, std::optional<DcbState> dcb) {
  kernel_.setDcb(FakeKernel::kHost, port, std::move(dcb));
}

DoctorReport DoctorNode::run(const DoctorOptions& options, const CounterSnapshot* baseline,
                             bool with_netlink, int64_t now, bool verbs) {
  deriveVerbs();
  const Sysfs sysfs(root_);
  return runDoctor({.sysfs = sysfs,
                    .netlink = with_netlink ? &netlink_ : nullptr,
                    .verbs = verbs ? &verbs_ : nullptr,
                    .pause = &pause_,
                    .options = options,
                    .baseline = baseline,
                    .now_unix = now});
}

std::vector<std::string> nonPass(const DoctorReport& r) {
  std::vector<std::string> out;
  for (const auto& c : r.results) {
    if (c.verdict != Verdict::kPass) {
      out.push_back(fmt::format("{} {} {}", c.check, c.device, verdictName(c.verdict)));
    }
  }
  return out;
}

std::string ev(const CheckResult* r, std::string_view key) {
  if (!r) return "<no result>";
  const std::string* v = r->value(key);
  return v ? *v : "<no " + std::string(key) + ">";
}

}  // namespace rdmanet::doctor::testing
