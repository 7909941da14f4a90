#include "deviceplugin/doctor/probe/probe_host.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>

#include "common/inventory/netdev.h"
#include "common/net/rdma_hw_stats.h"
#include "common/rdma/ibv_verbs.h"

namespace rdmanet::doctor::probe {
namespace {

namespace fs = std::filesystem;

std::string firstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

struct IfaddrsDeleter {
  void operator()(ifaddrs* a) const { freeifaddrs(a); }
};

// (interface, dotted IPv4) for every IPv4 address of this netns.
std::vector<std::pair<std::string, std::string>> ipv4Addresses() {
  std::vector<std::pair<std::string, std::string>> out;
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0) return out;
  std::unique_ptr<ifaddrs, IfaddrsDeleter> all(raw);
  for (const ifaddrs* a = raw; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN] = {};
    const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf))) out.emplace_back(a->ifa_name, buf);
  }
  return out;
}

}  // namespace

int interfaceMtu(const std::string& name) {
  if (!isValidIfName(name)) return 0;
  try {
    return std::stoi(firstLine(fs::path("/sys/class/net") / name / "mtu"));
  } catch (const std::exception&) {
    return 0;
  }
}

Result<exchange::InterfaceFacts> interfaceFacts(const std::string& name) {
  if (!isValidIfName(name) || !fs::exists(fs::path("/sys/class/net") / name)) {
    return makeError(ErrorCode::kDeviceNotFound, fmt::format("no interface {}", name));
  }
  exchange::InterfaceFacts f{.name = name};
  f.mac = firstLine(fs::path("/sys/class/net") / name / "address");
  for (const auto& [iface, ip] : ipv4Addresses()) {
    if (iface == name) {
      f.ipv4 = ip;
      break;
    }
  }
  return f;
}

std::string interfaceOfAddress(const std::string& ipv4) {
  for (const auto& [iface, ip] : ipv4Addresses()) {
    if (ip == ipv4) return iface;
  }
  return {};
}

std::vector<exchange::DeviceCandidate> rdmaCandidates() {
  std::vector<exchange::DeviceCandidate> out;
  IbvRdmaVerbs verbs;
  auto names = verbs.devices();
  if (!names.ok()) return out;
  for (const auto& name : *names) {
    exchange::DeviceCandidate c{.name = name};
    // The name comes from libibverbs' own sysfs listing: one path component.
    if (name.find('/') == std::string::npos) {
      c.node_guid = firstLine(fs::path("/sys/class/infiniband") / name / "node_guid");
    }
    if (auto f = verbs.query(name); f.ok() && !f->ports.empty()) {
      for (const auto& g : f->ports.front().gids) {
        c.gids.push_back(g.gid);
        if (g.type == GidType::kRoceV2) c.has_roce_v2 = true;
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::map<std::string, uint64_t> readHwCounters(const std::string& device, int port) {
  // nldev first: it answers in any netns that sees the device (a pod's compat device has no
  // hw_counters in sysfs); sysfs where nldev cannot (no NETLINK_RDMA).
  if (port > 0) {
    if (auto c = readRdmaPortHwCounters(device, static_cast<uint32_t>(port));
        c.ok() && !c->empty()) {
      return *c;
    }
  }
  std::map<std::string, uint64_t> out;
  if (device.empty() || device.find('/') != std::string::npos || device.starts_with('.')) {
    return out;
  }
  const fs::path dir =
      fs::path("/sys/class/infiniband") / device / "ports" / std::to_string(port) / "hw_counters";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // A counter that reads as no number (a write-only file) is left out.
    const std::string line = firstLine(it->path());
    uint64_t v = 0;
    const auto [stop, bad] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (!line.empty() && bad == std::errc() && stop == line.data() + line.size()) {
      out[it->path().filename().string()] = v;
    }
  }
  return out;
}

std::map<std::string, uint64_t> counterGrowth(const std::map<std::string, uint64_t>& before,
                                              const std::map<std::string, uint64_t>& after) {
  std::map<std::string, uint64_t> out;
  for (const auto& [name, v] : after) {
    auto it = before.find(name);
    const uint64_t was = it == before.end() ? 0 : it->second;
    if (v > was) out[name] = v - was;
  }
  return out;
}

}  // namespace rdmanet::doctor::probe
