#include "tests/simnode/simnode_cli.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "common/base/sysfs.h"
#include "tests/simnode/build_node.h"
#include "tests/simnode/command.h"
#include "tests/simnode/manifest.h"

namespace fs = std::filesystem;

namespace rdmanet::sim {
namespace {

constexpr const char* kBridge = "br0";

Status ip(std::vector<std::string> args) {
  args.insert(args.begin(), "ip");
  const auto r = runCommand(args);
  if (r.rc == 0) return okStatus();
  std::string cmd;
  for (const auto& a : args) cmd += (cmd.empty() ? "" : " ") + a;
  return makeError(ErrorCode::kNetlinkFailure, fmt::format("`{}` failed: {}", cmd, r.out));
}

// ROOT must be an absolute, normalised path and never "/": `down` deletes below it.
bool validRoot(const fs::path& root) {
  return root.is_absolute() && root == root.lexically_normal() && root != root.root_path() &&
         root.filename() != "";
}

bool validPrefix(const std::string& p) {
  if (p.size() > 7) return false;
  for (char c : p) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

std::string randomToken() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char b[6] = {};
  in.read(reinterpret_cast<char*>(b), sizeof b);
  return fmt::format("{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", b[0], b[1], b[2], b[3], b[4], b[5]);
}

// The real host netns view: /sys/class/net of this process.
const Sysfs& hostSysfs() {
  static const Sysfs s("/");
  return s;
}

bool hostHasLink(const std::string& name) { return hostSysfs().exists("/sys/class/net/" + name); }

std::string hostAlias(const std::string& name) {
  return hostSysfs().readOpt("/sys/class/net/" + name + "/ifalias").value_or("");
}

int fail(const Error& e) {
  std::cerr << "simnode: " << e.msg << "\n";
  return 1;
}

// Creates the bridge namespace and one veth per netdev, recording each step in the manifest.
Status createLinks(const fs::path& root, Manifest& m, const BuiltNode& node, SimTree& tree) {
  const std::string ns = "rdmanet-sim" + (m.ifprefix.empty() ? "" : "-" + m.ifprefix);
  RDMANET_RETURN_IF_ERROR(ip({"netns", "add", ns}));
  m.netns = ns;
  RDMANET_RETURN_IF_ERROR(saveManifest(root, m));
  RDMANET_RETURN_IF_ERROR(ip({"-n", ns, "link", "add", kBridge, "type", "bridge"}));
  m.bridge = kBridge;
  RDMANET_RETURN_IF_ERROR(saveManifest(root, m));
  RDMANET_RETURN_IF_ERROR(ip({"-n", ns, "link", "set", kBridge, "alias", m.marker}));
  RDMANET_RETURN_IF_ERROR(ip({"-n", ns, "link", "set", kBridge, "up"}));
  RDMANET_RETURN_IF_ERROR(ip({"-n", ns, "link", "set", "lo", "up"}));
  for (size_t i = 0; i < node.netdevs.size(); ++i) {
    const BuiltNetdev& nd = node.netdevs[i];
    const std::string peer = fmt::format("p{}", i);
    // The peer is created directly in the namespace, so its name cannot clash on the host.
    const std::string mtu = std::to_string(nd.mtu);
    RDMANET_RETURN_IF_ERROR(ip({"link", "add", nd.name, "mtu", mtu, "address", nd.mac, "type",
                                "veth", "peer", "name", peer, "mtu", mtu, "netns", ns}));
    m.links.push_back(
        ManifestLink{.name = nd.name, .peer = peer, .pci = nd.pci.str(), .rdma = nd.rdma});
    RDMANET_RETURN_IF_ERROR(saveManifest(root, m));
    RDMANET_RETURN_IF_ERROR(ip({"link", "set", nd.name, "alias", m.marker}));
    RDMANET_RETURN_IF_ERROR(ip({"-n", ns, "link", "set", peer, "master", kBridge, "up"}));
    RDMANET_RETURN_IF_ERROR(ip({"link", "set", nd.name, "up"}));
    const auto ifindex = hostSysfs().readInt("/sys/class/net/" + nd.name + "/ifindex");
    const auto mac = hostSysfs().readOpt("/sys/class/net/" + nd.name + "/address");
    if (!ifindex || !mac) {
      return makeError(ErrorCode::kDeviceNotFound, "cannot read back " + nd.name + " from /sys");
    }
    setNetdevIdentity(tree, nd, static_cast<int>(*ifindex), *mac);
  }
  return okStatus();
}

}  // namespace

int simnodeUp(const UpOptions& opts) {
  if (!validRoot(opts.root)) return fail(makeError(ErrorCode::kInvalidConfig, "bad --root"));
  if (fs::exists(manifestPath(opts.root))) {
    return fail(makeError(ErrorCode::kInvalidConfig,
                          opts.root.string() + " is already up; run `hack/simnode down` first"));
  }
  if (!opts.tree_only && ::geteuid() != 0) {
    return fail(
        makeError(ErrorCode::kNetnsFailure, "creating veths needs root (or use --tree-only)"));
  }
  const fs::path topo_file = opts.topology.empty()
                                 ? fs::path(RDMANET_SOURCE_DIR "/hack/topologies/default.json")
                                 : opts.topology;
  auto topo = loadTopology(topo_file);
  if (!topo.ok()) return fail(topo.error());
  if (!opts.ifprefix.empty()) topo->ifprefix = opts.ifprefix;
  if (!validPrefix(topo->ifprefix)) {
    return fail(makeError(ErrorCode::kInvalidConfig, "ifprefix: want [a-z0-9], <= 7 characters"));
  }

  Manifest m;
  m.marker = "rdmanet-simnode:" + randomToken();
  m.ifprefix = topo->ifprefix;
  m.topology = topo_file.string();
  m.created_root = !fs::exists(opts.root);
  std::error_code ec;
  fs::create_directories(opts.root, ec);
  if (ec) return fail(errnoError(ErrorCode::kIoFailure, ec.value(), "mkdir " + opts.root.string()));
  if (m.created_root) ::chmod(opts.root.c_str(), 0700);
  m.tree = true;  // recorded before writing, so a half-written tree is removed by down
  if (auto s = saveManifest(opts.root, m); !s.ok()) return fail(s.error());

  Status st = okStatus();
  try {
    SimTree tree(opts.root);
    auto node = buildNode(*topo, tree);
    if (!node.ok()) {
      st = node.error();
    } else if (!opts.tree_only) {
      st = createLinks(opts.root, m, *node, tree);
    }
    if (st.ok()) {
      std::cout << fmt::format("simnode up: {} netdevs, {} RDMA devices, {} GPUs under {}/sys{}\n",
                               node->netdevs.size(), node->rdma_devices.size(), node->gpus.size(),
                               opts.root.string(),
                               opts.tree_only ? " (tree only)" : ", veths bridged in " + m.netns);
    }
  } catch (const std::exception& e) {
    st = makeError(ErrorCode::kIoFailure, e.what());
  }
  if (!st.ok()) {
    std::cerr << "simnode: up failed: " << st.error().msg << "\nsimnode: undoing\n";
    (void)saveManifest(opts.root, m);
    (void)simnodeDown(opts.root);
    return 1;
  }
  return 0;
}

int simnodeDown(const fs::path& root) {
  if (!validRoot(root)) return fail(makeError(ErrorCode::kInvalidConfig, "bad --root"));
  auto loaded = loadManifest(root);
  if (!loaded.ok()) {
    if (loaded.error().code == ErrorCode::kDeviceNotFound) {
      std::cout << "simnode down: nothing to do (" << loaded.error().msg << ")\n";
      return 0;
    }
    return fail(loaded.error());
  }
  const Manifest& m = *loaded;
  int refused = 0;
  for (const auto& l : m.links) {
    if (!hostHasLink(l.name)) continue;  // moved into a pod: dies with its peer's namespace
    const std::string alias = hostAlias(l.name);
    if (alias != m.marker) {
      std::cerr << fmt::format(
          "simnode: refusing to delete {}: not created by this simnode "
          "(ifalias \"{}\", want \"{}\")\n",
          l.name, alias, m.marker);
      ++refused;
      continue;
    }
    if (auto s = ip({"link", "del", l.name}); !s.ok()) std::cerr << s.error().msg << "\n";
  }
  if (!m.netns.empty()) {
    const auto show = runCommand({"ip", "-n", m.netns, "-o", "link", "show", kBridge});
    const bool ours = show.rc == 0 && show.out.find("alias " + m.marker) != std::string::npos;
    const bool ns_exists = fs::exists("/run/netns/" + m.netns);
    if (ns_exists && (ours || m.bridge.empty())) {
      // Deleting the namespace destroys every switch-side end, and with it each veth pair,
      // including host ends that a CNI moved into pods.
      if (auto s = ip({"netns", "del", m.netns}); !s.ok()) std::cerr << s.error().msg << "\n";
    } else if (ns_exists) {
      std::cerr << "simnode: refusing to delete netns " << m.netns << ": its bridge is not ours\n";
      ++refused;
    }
  }
  std::error_code ec;
  if (m.tree) fs::remove_all(root / "sys", ec);
  fs::remove(manifestPath(root).string() + ".tmp", ec);
  fs::remove(manifestPath(root), ec);
  if (m.created_root) fs::remove(root, ec);  // only if empty: never takes anything else along
  std::cout << fmt::format("simnode down: removed {} links, netns {}, tree {}/sys{}\n",
                           m.links.size() - static_cast<size_t>(refused),
                           m.netns.empty() ? "-" : m.netns, root.string(),
                           refused ? fmt::format(" ({} refused)", refused) : "");
  return refused ? 2 : 0;
}

int simnodeLink(const fs::path& root, const std::string& ifname, bool up) {
  if (!validRoot(root)) return fail(makeError(ErrorCode::kInvalidConfig, "bad --root"));
  auto m = loadManifest(root);
  if (!m.ok()) return fail(m.error());
  try {
    SimTree tree(root);
    if (!fs::exists(tree.host("/sys/class/net/" + ifname))) {
      return fail(makeError(ErrorCode::kDeviceNotFound, "no netdev " + ifname + " in the tree"));
    }
    for (const auto& l : m->links) {
      if (l.name != ifname) continue;
      // The switch side goes down, like a pulled cable: the host end loses carrier wherever
      // it lives now (host netns or a pod).
      if (auto s = ip({"-n", m->netns, "link", "set", l.peer, up ? "up" : "down"}); !s.ok()) {
        return fail(s.error());
      }
    }
    tree.setNetdevUp(ifname, up);
    if (auto rdma = Sysfs(root).list("/sys/class/net/" + ifname + "/device/infiniband");
        !rdma.empty()) {
      for (const auto& dev : rdma) tree.setRdmaPortActive(dev, 1, up);
    }
  } catch (const std::exception& e) {
    return fail(makeError(ErrorCode::kIoFailure, e.what()));
  }
  std::cout << fmt::format("simnode link: {} {}\n", ifname, up ? "up" : "down");
  return 0;
}

}  // namespace rdmanet::sim
