#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "tests/fakes/fake_kernel_internal.h"

namespace rdmanet {

const char* fakeOpName(FakeOp op) {
  static constexpr const char* kNames[] = {"linkByName", "linkByIndex",    "links",
                                           "setUp",      "rename",         "setMtu",
                                           "setMac",     "moveToNetns",    "addMacvlan",
                                           "addVlan",    "deleteLink",     "vfs",
                                           "setVfMac",   "setVfVlan",      "setVfSpoofchk",
                                           "setVfTrust", "setVfLinkState", "setVfRate",
                                           "addresses",  "addAddress",     "deleteAddress",
                                           "routes",     "addRoute",       "deleteRoute",
                                           "dcb",        "rdmaNetnsMode",  "moveRdmaToNetns",
                                           "rdmaLinks",  "setEgressRate",  "egressRate",
                                           "runInNetns", "openNetns"};
  return kNames[static_cast<int>(op)];
}

bool isMutation(FakeOp op) {
  switch (op) {
    case FakeOp::kLinkByName:
    case FakeOp::kLinkByIndex:
    case FakeOp::kLinks:
    case FakeOp::kVfs:
    case FakeOp::kAddresses:
    case FakeOp::kRoutes:
    case FakeOp::kDcb:
    case FakeOp::kRdmaNetnsMode:
    case FakeOp::kRdmaLinks:
    case FakeOp::kEgressRate:
    case FakeOp::kRunInNetns:
    case FakeOp::kOpenNetns:
      return false;
    default:
      return true;
  }
}

void refreshOperstate(FakeLink& l) {
  if (!l.info.admin_up) {
    l.info.operstate = "down";
  } else if (l.info.carrier) {
    l.info.operstate = "up";
  } else {
    l.info.operstate = l.info.parent_ifindex > 0 ? "lowerlayerdown" : "down";
  }
}

bool validIfname(const std::string& name) {
  return !name.empty() && name.size() < 16 && name != "." && name != ".." &&
         name.find_first_of("/: \t\n") == std::string::npos;
}

FakeKernel::FakeKernel() {
  addNetns(kHost);
  std::lock_guard lock(mu_);
  findLocked(*nsLocked(kHost), 1)->info.admin_up = true;
  refreshOperstate(*findLocked(*nsLocked(kHost), 1));
}

FakeKernel::~FakeKernel() {
  for (auto& [name, ns] : ns_) ::close(ns->memfd);
}

void FakeKernel::addNetns(const std::string& name) {
  std::lock_guard lock(mu_);
  if (ns_.count(name)) return;
  auto ns = std::make_unique<Ns>();
  ns->name = name;
  ns->memfd = ::memfd_create(("rdmanet-fake-netns-" + name).c_str(), MFD_CLOEXEC);
  struct stat st {};
  if (ns->memfd < 0 || ::fstat(ns->memfd, &st) != 0) std::abort();
  ns->ino = st.st_ino;
  FakeLink lo;
  lo.info.ifindex = 1;
  lo.info.name = "lo";
  lo.info.mtu = 65536;
  lo.info.carrier = true;
  lo.physical = true;
  lo.max_mtu = 65536;
  refreshOperstate(lo);
  ns->links[1] = lo;
  ns_[name] = std::move(ns);
}

void FakeKernel::deleteNetns(const std::string& name) {
  std::lock_guard lock(mu_);
  if (name == kHost) return;
  auto it = ns_.find(name);
  if (it == ns_.end()) return;
  std::unique_ptr<Ns> gone = std::move(it->second);
  ns_.erase(it);
  Ns& host = *ns_.at(kHost);
  for (auto& [idx, link] : gone->links) {
    if (!link.physical || link.info.name == "lo") continue;
    // Physical devices go back to the initial namespace, closed, under "dev%d" on a clash.
    link.info.admin_up = false;
    link.addresses.clear();
    refreshOperstate(link);
    const int new_idx = insertLocked(host, link, idx);
    FakeLink* moved = findLocked(host, new_idx);
    if (std::count_if(host.links.begin(), host.links.end(),
                      [&](auto& kv) { return kv.second.info.name == moved->info.name; }) > 1) {
      moved->info.name = fmt::format("dev{}", new_idx);
    }
  }
  for (auto& [dev, where] : rdma_) {
    if (where.first == name) where.first = kHost;
  }
  ::close(gone->memfd);
  notifyLocked();
}

bool FakeKernel::hasNetns(const std::string& ns) const {
  std::lock_guard lock(mu_);
  return ns_.count(ns) > 0;
}

NetnsHandle FakeKernel::netnsHandle(const std::string& ns) const {
  std::lock_guard lock(mu_);
  const Ns* n = nsLocked(ns);
  if (!n) return NetnsHandle();
  return NetnsHandle(::fcntl(n->memfd, F_DUPFD_CLOEXEC, 0));
}

std::optional<std::string> FakeKernel::netnsOfFd(int fd) const {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  std::lock_guard lock(mu_);
  for (const auto& [name, ns] : ns_) {
    if (ns->ino == st.st_ino) return name;
  }
  return std::nullopt;
}

FakeKernel::Ns* FakeKernel::nsLocked(const std::string& ns) {
  auto it = ns_.find(ns);
  return it == ns_.end() ? nullptr : it->second.get();
}

const FakeKernel::Ns* FakeKernel::nsLocked(const std::string& ns) const {
  auto it = ns_.find(ns);
  return it == ns_.end() ? nullptr : it->second.get();
}

FakeLink* FakeKernel::findLocked(Ns& ns, int ifindex) {
  auto it = ns.links.find(ifindex);
  return it == ns.links.end() ? nullptr : &it->second;
}

FakeLink* FakeKernel::findLocked(Ns& ns, const std::string& name) {
  for (auto& [idx, l] : ns.links) {
    if (l.info.name == name) return &l;
  }
  return nullptr;
}

int FakeKernel::insertLocked(Ns& ns, FakeLink link, int wanted) {
  int idx = wanted;
  if (idx <= 0 || ns.links.count(idx)) {
    while (ns.links.count(ns.next_ifindex)) ++ns.next_ifindex;
    idx = ns.next_ifindex++;
  }
  link.info.ifindex = idx;
  ns.links[idx] = std::move(link);
  return idx;
}

void FakeKernel::removeLinkLocked(Ns& ns, int ifindex) {
  ns.links.erase(ifindex);
  std::erase_if(ns.routes, [&](const Route& r) { return r.ifindex == ifindex; });
  // Upper devices (macvlan, vlan) die with their lower device.
  std::vector<int> uppers;
  for (auto& [idx, l] : ns.links) {
    if (l.info.parent_ifindex == ifindex && !l.physical) uppers.push_back(idx);
  }
  for (int u : uppers) removeLinkLocked(ns, u);
}

void FakeKernel::subscribe(int eventfd) {
  std::lock_guard lock(mu_);
  subscribers_.push_back(eventfd);
}

void FakeKernel::unsubscribe(int eventfd) {
  std::lock_guard lock(mu_);
  std::erase(subscribers_, eventfd);
}

void FakeKernel::notifyLocked() {
  const uint64_t one = 1;
  for (int fd : subscribers_) (void)::write(fd, &one, sizeof(one));
}

MacAddress FakeKernel::nextMac() {
  ++mac_counter_;
  return MacAddress{{0x02, 0xfa, 0x4e, 0x00, static_cast<uint8_t>(mac_counter_ >> 8),
                     static_cast<uint8_t>(mac_counter_)}};
}

int FakeKernel::addLink(const std::string& ns, const FakeLinkSpec& spec) {
  std::lock_guard lock(mu_);
  Ns* n = nsLocked(ns);
  if (!n || !validIfname(spec.name) || findLocked(*n, spec.name)) {
    std::fprintf(stderr, "FakeKernel::addLink: bad netns or duplicate name %s\n",
                 spec.name.c_str());
    std::abort();  // a broken test fixture, not a behaviour under test
  }
  FakeLink l;
  l.info.name = spec.name;
  l.info.kind = spec.kind;
  l.info.mac = spec.mac.value_or(nextMac());
  l.info.mtu = spec.mtu;
  l.info.admin_up = spec.up;
  l.info.carrier = spec.carrier;
  l.info.parent_ifindex = spec.parent_ifindex;
  l.info.parent_dev = spec.parent_dev;
  // Only a driver sets a permanent address; the kernel reports none for virtual links.
  if (spec.kind.empty()) l.info.perm_mac = spec.perm_mac.value_or(l.info.mac);
  l.physical = spec.kind.empty();
  refreshOperstate(l);
  notifyLocked();
  return insertLocked(*n, std::move(l), 0);
}

int FakeKernel::addLink(const std::string& ns, const std::string& name, const std::string& kind) {
  FakeLinkSpec spec;
  spec.name = name;
  spec.kind = kind;
  return addLink(ns, spec);
}

int FakeKernel::addPf(const std::string& ns, const std::string& name, int num_vfs, uint32_t mtu) {
  FakeLinkSpec spec;
  spec.name = name;
  spec.up = true;
  spec.mtu = mtu;
  const int idx = addLink(ns, spec);
  std::lock_guard lock(mu_);
  FakeLink* pf = findLocked(*nsLocked(ns), idx);
  pf->info.num_vfs = num_vfs;
  for (int i = 0; i < num_vfs; ++i) {
    VfInfo vf;
    vf.index = i;
    vf.spoofchk = true;  // the mlx5 default
    pf->vfs.push_back(vf);
  }
  return idx;
}

void FakeKernel::unsupportVfKnob(const std::string& ns, const std::string& pf, VfKnob knob) {
  std::lock_guard lock(mu_);
  if (Ns* n = nsLocked(ns)) {
    if (FakeLink* l = findLocked(*n, pf)) l->unsupported_vf_knobs.insert(knob);
  }
}

void FakeKernel::setDcb(const std::string& ns, const std::string& ifname,
                        std::optional<DcbState> dcb) {
  std::lock_guard lock(mu_);
  if (Ns* n = nsLocked(ns)) {
    if (FakeLink* l = findLocked(*n, ifname)) l->dcb = std::move(dcb);
  }
}

void FakeKernel::setCarrier(const std::string& ns, const std::string& ifname, bool carrier) {
  std::lock_guard lock(mu_);
  if (Ns* n = nsLocked(ns)) {
    if (FakeLink* l = findLocked(*n, ifname)) {
      l->info.carrier = carrier;
      refreshOperstate(*l);
      notifyLocked();
    }
  }
}

void FakeKernel::setRenameWhileUpAllowed(bool on) {
  std::lock_guard lock(mu_);
  rename_up_ok_ = on;
}

void FakeKernel::setVlanSupported(bool on) {
  std::lock_guard lock(mu_);
  vlan_supported_ = on;
}

std::optional<FakeLink> FakeKernel::link(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  const Ns* n = nsLocked(ns);
  if (!n) return std::nullopt;
  for (const auto& [idx, l] : n->links) {
    if (l.info.name == name) return l;
  }
  return std::nullopt;
}

std::optional<FakeLink> FakeKernel::linkByIndex(const std::string& ns, int ifindex) const {
  std::lock_guard lock(mu_);
  const Ns* n = nsLocked(ns);
  if (!n || !n->links.count(ifindex)) return std::nullopt;
  return n->links.at(ifindex);
}

std::vector<FakeLink> FakeKernel::linksIn(const std::string& ns) const {
  std::lock_guard lock(mu_);
  std::vector<FakeLink> out;
  if (const Ns* n = nsLocked(ns)) {
    for (const auto& [idx, l] : n->links) out.push_back(l);
  }
  return out;
}

std::vector<Route> FakeKernel::routesIn(const std::string& ns) const {
  std::lock_guard lock(mu_);
  const Ns* n = nsLocked(ns);
  return n ? n->routes : std::vector<Route>();
}

std::optional<std::string> FakeKernel::netnsOfLink(const std::string& name) const {
  std::lock_guard lock(mu_);
  for (const auto& [nsname, ns] : ns_) {
    for (const auto& [idx, l] : ns->links) {
      if (l.info.name == name) return nsname;
    }
  }
  return std::nullopt;
}

void FakeKernel::addRdmaDevice(const std::string& name, const std::string& ns,
                               const std::string& netdev) {
  std::lock_guard lock(mu_);
  rdma_[name] = {ns, static_cast<int>(rdma_.size())};
  for (auto& [nsname, n] : ns_) {  // a port has one netdev: re-adding rebinds it
    for (auto& [idx, l] : n->links) {
      if (l.rdma_device == name) l.rdma_device.clear();
    }
  }
  if (netdev.empty()) return;
  Ns* n = nsLocked(ns);
  FakeLink* l = n ? findLocked(*n, netdev) : nullptr;
  if (!l) {
    std::fprintf(stderr, "FakeKernel::addRdmaDevice: no link %s in %s\n", netdev.c_str(),
                 ns.c_str());
    std::abort();  // a broken test fixture
  }
  l->rdma_device = name;
}

void FakeKernel::setParentDev(const std::string& ns, const std::string& ifname,
                              const std::string& dev) {
  std::lock_guard lock(mu_);
  if (Ns* n = nsLocked(ns)) {
    if (FakeLink* l = findLocked(*n, ifname)) l->info.parent_dev = dev;
  }
}

std::optional<std::string> FakeKernel::rdmaNetnsOf(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = rdma_.find(name);
  if (it == rdma_.end()) return std::nullopt;
  return it->second.first;
}

void FakeKernel::setRdmaNetnsMode(RdmaNetnsMode mode) {
  std::lock_guard lock(mu_);
  rdma_mode_ = mode;
}

void FakeKernel::setRdmaSupported(bool on) {
  std::lock_guard lock(mu_);
  rdma_supported_ = on;
}

void FakeKernel::failCall(FakeOp op, int err, int nth) {
  std::lock_guard lock(mu_);
  faults_.push_back(Fault{.op = op, .remaining = nth, .err = err});
}

void FakeKernel::failMutation(int nth, int err) {
  std::lock_guard lock(mu_);
  faults_.push_back(Fault{.op = std::nullopt, .remaining = nth, .err = err});
}

void FakeKernel::interruptDumps(int n) {
  std::lock_guard lock(mu_);
  dump_interrupts_ = n;
}

void FakeKernel::clearFaults() {
  std::lock_guard lock(mu_);
  faults_.clear();
  dump_interrupts_ = 0;
}

int FakeKernel::calls(FakeOp op) const {
  std::lock_guard lock(mu_);
  auto it = calls_.find(op);
  return it == calls_.end() ? 0 : it->second;
}

int FakeKernel::mutations() const {
  std::lock_guard lock(mu_);
  return mutations_;
}

std::vector<std::string> FakeKernel::callLog() const {
  std::lock_guard lock(mu_);
  return log_;
}

int FakeKernel::enter(FakeOp op, const std::string& ns, const std::string& args) {
  ++calls_[op];
  const bool mutation = isMutation(op);
  if (mutation) ++mutations_;
  log_.push_back(fmt::format("{}({}{}{})", fakeOpName(op), ns, args.empty() ? "" : ", ", args));
  int err = 0;
  for (auto it = faults_.begin(); it != faults_.end();) {
    const bool matches = it->op ? *it->op == op : mutation;
    if (matches && --it->remaining == 0) {
      if (err == 0) err = it->err;
      it = faults_.erase(it);
    } else {
      ++it;
    }
  }
  return err;
}

}  // namespace rdmanet
