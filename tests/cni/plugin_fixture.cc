#include "tests/cni/plugin_fixture.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "cni/conf/version.h"

namespace rdmanet::cni::testing {

Result<ExecOutput> FakeIpam::exec(const ExecRequest& req) {
  std::lock_guard lock(mu_);
  calls.push_back(req);
  const std::string cmd = req.env.at("CNI_COMMAND");
  if (cmd == "VERSION") {
    json v = json::array();
    for (const auto& s : supportedVersions()) {
      if (versionAtLeast(highest, s)) v.push_back(s);
    }
    return ExecOutput{0, json{{"cniVersion", highest}, {"supportedVersions", v}}.dump()};
  }
  auto conf = json::parse(req.stdin_data);
  const std::string version = conf.value("cniVersion", "");
  if (!versionAtLeast(highest, version)) {
    return ExecOutput{1, R"({"code": 1, "msg": "incompatible CNI versions"})"};
  }
  const std::string key = req.env.at("CNI_CONTAINERID") + "_" + req.env.at("CNI_IFNAME");
  if (cmd == "ADD") {
    if (fail) return ExecOutput{1, fail->dump()};
    ++live[key];
    json r = result;
    r["cniVersion"] = version;
    return ExecOutput{0, r.dump()};
  }
  if (cmd == "DEL") live.erase(key);
  return ExecOutput{0, ""};
}

int FakeIpam::count(const std::string& command) const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (const auto& c : calls) n += c.env.at("CNI_COMMAND") == command;
  return n;
}

TestNode::TestNode() {
  using sim::pci;
  tree_ = std::make_unique<sim::SimTree>(tmp_.path() / "sysfs");
  sim::SimTree& t = *tree_;
  const auto rc = t.addHostBridge(0, 0x80);
  const auto rp = t.addBridge(
      rc, {.address = pci("0000:80:01.0"), .secondary_bus = 0x81, .subordinate_bus = 0x81});
  t.addFunction(
      rp, {.address = pci("0000:81:00.0"), .numa_node = 1, .sriov_totalvfs = 4, .sriov_numvfs = 2});
  t.addFunction(rp, {.address = pci("0000:81:10.0"), .device = "101e", .numa_node = 1});
  t.addFunction(rp, {.address = pci("0000:81:10.2"), .device = "101e", .numa_node = 1});
  t.linkVf(pci("0000:81:00.0"), pci("0000:81:10.0"), 0);
  t.linkVf(pci("0000:81:00.0"), pci("0000:81:10.2"), 1);
  t.addNetdev(pci("0000:81:00.0"), {.name = "ens1f0", .ifindex = 2});
  t.addNetdev(pci("0000:81:10.0"), {.name = "ens1f0v0", .ifindex = 3});
  t.addNetdev(pci("0000:81:10.2"), {.name = "ens1f0v1", .ifindex = 4});
  t.addRdmaDevice(pci("0000:81:00.0"), {.name = "mlx5_0", .uverbs = 0});
  sim::RdmaPortSpec port;
  port.gids = {{.index = 0, .gid = "fe80:0000:0000:0000:0000:00ff:fe00:0001", .type = "IB/RoCE v1"},
               {.index = 3, .gid = "0000:0000:0000:0000:0000:ffff:0a38:0002", .type = "RoCE v2"}};
  t.addRdmaDevice(pci("0000:81:10.0"), {.name = "mlx5_1", .ports = {port}, .uverbs = 1});
  const auto rp2 = t.addBridge(
      rc, {.address = pci("0000:80:02.0"), .secondary_bus = 0x82, .subordinate_bus = 0x82});
  t.addFunction(rp2, {.address = pci("0000:82:00.0"), .numa_node = 0});
  t.addNetdev(pci("0000:82:00.0"), {.name = "ens2f0", .ifindex = 5});

  // Jumbo frames on the PF, as on a RoCE node: the sriov netconf's pod MTU 9000 fits it.
  pf_ifindex_ = kernel_.addPf(FakeKernel::kHost, "ens1f0", 4, 9000);
  auto physical = [&](const char* name, bool up) {
    FakeLinkSpec spec;
    spec.name = name;
    spec.up = up;
    kernel_.addLink(FakeKernel::kHost, spec);
  };
  physical("ens1f0v0", true);
  physical("ens1f0v1", false);
  physical("ens2f0", true);
  // The kernel ties each physical netdev to its PCI function (IFLA_PARENT_DEV_NAME).
  kernel_.setParentDev(FakeKernel::kHost, "ens1f0", "0000:81:00.0");
  kernel_.setParentDev(FakeKernel::kHost, "ens1f0v0", "0000:81:10.0");
  kernel_.setParentDev(FakeKernel::kHost, "ens1f0v1", "0000:81:10.2");
  kernel_.setParentDev(FakeKernel::kHost, "ens2f0", "0000:82:00.0");
  DcbState dcb;
  dcb.supported = true;
  dcb.pfc_enabled = 1 << 3;
  dcb.pfc_cap = 8;
  kernel_.setDcb(FakeKernel::kHost, "ens1f0", dcb);
  kernel_.addRdmaDevice("mlx5_0", FakeKernel::kHost, "ens1f0");
  kernel_.addRdmaDevice("mlx5_1", FakeKernel::kHost, "ens1f0v0");
  kernel_.setRdmaNetnsMode(RdmaNetnsMode::kExclusive);
  runner_.addNetns(kPod, "pod1");
  runner_.addNetns(kPod2, "pod2");

  log_sink_ = std::fopen((tmp_.path() / "log.txt").c_str(), "a");
  log_.setSink(log_sink_);
  log_.setLevel(LogLevel::kDebug);
  deps_ = std::make_unique<PluginDeps>(PluginDeps{.host = host_,
                                                  .runner = runner_,
                                                  .ipam = ipam_,
                                                  .sysfs = Sysfs(tmp_.path() / "sysfs"),
                                                  .store = StateStore(tmp_.path() / "state"),
                                                  .log = log_,
                                                  .lock_timeout = std::chrono::milliseconds(200),
                                                  .boot_id_file = (tmp_.path() / "boot_id")});
  // The node's roots, in the test's own directory: a network's paths must stay beneath them.
  deps_->node.devinfo_root = (tmp_.path() / "devinfo").string();
  deps_->node.pod_info_root = tmp_.path().string();
  deps_->node.dra_devices_root = tmp_.path().string();
  deps_->node.log_root = (tmp_.path() / "log").string();
  deps_->node.kubelet_checkpoint = (tmp_.path() / "kubelet_internal_checkpoint").string();
  setBootId("0b00713d-0000-4000-8000-000000000001");
}

void TestNode::setBootId(const std::string& id) {
  std::ofstream(tmp_.path() / "boot_id", std::ios::trunc) << id << "\n";
}

TestNode::~TestNode() {
  if (log_sink_ != nullptr) std::fclose(log_sink_);
}

Invocation TestNode::invoke(const std::string& command, const std::string& conf,
                            const std::string& netns, const std::string& cid,
                            const std::string& ifname,
                            std::map<std::string, std::string> extra_env) {
  std::map<std::string, std::string> env = {{"CNI_COMMAND", command},
                                            {"CNI_CONTAINERID", cid},
                                            {"CNI_NETNS", netns},
                                            {"CNI_IFNAME", ifname},
                                            {"CNI_PATH", "/opt/cni/bin"}};
  for (auto& [k, v] : extra_env) env[k] = v;
  return runCni(
      *deps_,
      [&](const char* k) -> std::optional<std::string> {
        auto it = env.find(k);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      conf);
}

json TestNode::addOk(const std::string& conf, const std::string& netns, const std::string& cid,
                     const std::string& ifname) {
  const Invocation out = invoke("ADD", conf, netns, cid, ifname);
  EXPECT_EQ(out.exit_code, 0) << out.stdout_data;
  auto j = parseJson(out.stdout_data);
  return j.ok() ? *j : json();
}

std::string TestNode::withPrev(const std::string& conf, const json& prev) {
  json c = json::parse(conf);
  c["prevResult"] = prev;
  return c.dump();
}

bool TestNode::vfKnobsBeforeMove(size_t mark) const {
  const auto log = kernel_.callLog();
  size_t last_vf_set = 0, first_move = 0;
  for (size_t i = mark; i < log.size(); ++i) {
    if (log[i].rfind("setVf", 0) == 0) last_vf_set = i;
    if (log[i].rfind("moveToNetns", 0) == 0 && first_move == 0) first_move = i;
  }
  return last_vf_set > 0 && first_move > 0 && last_vf_set < first_move;
}

TestNode::World TestNode::world() const {
  World w;
  auto describe = [](const FakeLink& l) {
    return fmt::format("{}/{}/{}/{}/{}", l.info.name, l.info.mtu, l.info.mac.str(),
                       l.info.admin_up ? "up" : "down", l.info.kind);
  };
  for (const auto& l : kernel_.linksIn(FakeKernel::kHost)) w.host_links.push_back(describe(l));
  for (const auto& l : kernel_.linksIn("pod1")) w.pod_links.push_back(describe(l));
  if (auto pf = kernel_.link(FakeKernel::kHost, "ens1f0")) w.vfs = pf->vfs;
  for (const char* d : {"mlx5_0", "mlx5_1"}) {
    w.rdma.push_back(fmt::format("{}@{}", d, kernel_.rdmaNetnsOf(d).value_or("?")));
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(tmp_.path() / "state", ec)) {
    const auto rel = e.path().lexically_relative(tmp_.path() / "state").string();
    // The IPAM version cache is expected to persist; lock and temp files are not.
    if (e.is_regular_file() && rel.rfind("ipam/", 0) != 0) w.state_files.push_back(rel);
  }
  for (const auto& e : std::filesystem::directory_iterator(tmp_.path() / "devinfo", ec)) {
    w.state_files.push_back("devinfo/" + e.path().filename().string());
  }
  std::sort(w.state_files.begin(), w.state_files.end());
  w.leases = ipam_.live;
  return w;
}

std::string dumpWorld(const TestNode::World& w) {
  std::string out = fmt::format(
      "host: {}\npod: {}\nrdma: {}\nstate: {}\nleases: {}\nvfs:", fmt::join(w.host_links, " "),
      fmt::join(w.pod_links, " "), fmt::join(w.rdma, " "), fmt::join(w.state_files, " "),
      w.leases.size());
  for (const auto& v : w.vfs) {
    out += fmt::format(" [{} mac={} vlan={} qos={} spoof={} trust={} ls={} rate={}-{}]", v.index,
                       v.mac.str(), v.vlan, v.qos, v.spoofchk, v.trust,
                       static_cast<int>(v.link_state), v.min_tx_rate, v.max_tx_rate);
  }
  return out;
}

void TestNode::writeDraRecord(const std::string& pod_uid, const std::string& claim_uid,
                              const json& devices) const {
  std::filesystem::create_directories(draRecords() / pod_uid);
  std::ofstream(draRecords() / pod_uid / (claim_uid + ".json")) << json{
      {"claim", {{"namespace", "team"}, {"name", "c"}, {"uid", claim_uid}}},
      {"devices", devices}}.dump();
}

json TestNode::draDevice(const std::string& resource, const std::string& pci, const json& extra) {
  json d = {{"request", "nic"}, {"resourceName", resource}, {"pciAddress", pci}, {"device", "d"}};
  d.update(extra);
  return d;
}

std::string TestNode::logText() const {
  std::fflush(log_sink_);
  std::ifstream in(tmp_.path() / "log.txt");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string TestNode::sriovConf(const std::string& extra) const {
  return R"({"cniVersion": "1.1.0", "name": "rdma-net", "type": "rdmanet",
    "deviceID": "0000:81:10.0", "vlan": 100, "spoofchk": "off", "trust": "on",
    "link_state": "enable", "max_tx_rate": 10000, "mtu": 9000, "mac": "02:00:00:aa:00:01",
    "lossless": {"priority": 3, "check": "enforce"},
    "runtimeConfig": {"CNIDeviceInfoFile": ")" +
         (tmp_.path() / "devinfo/c1.json").string() + R"("},
    "ipam": {"type": "fake-ipam"})" +
         extra + "}";
}

std::string TestNode::macvlanConf(const std::string& extra) const {
  return R"({"cniVersion": "1.0.0", "name": "mv-net", "type": "rdmanet", "master": "ens1f0",
    "mode": "bridge", "mtu": 1400, "ipam": {"type": "fake-ipam"})" +
         extra + "}";
}

std::string TestNode::hostDeviceConf(const std::string& extra) const {
  return R"({"cniVersion": "0.4.0", "name": "hd-net", "type": "rdmanet", "device": "ens2f0",
    "ipam": {"type": "fake-ipam"})" +
         extra + "}";
}

}  // namespace rdmanet::cni::testing
