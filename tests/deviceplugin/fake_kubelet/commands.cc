#include "tests/deviceplugin/fake_kubelet/commands.h"

#include <fmt/format.h>

#include <sstream>
#include <vector>

namespace rdmanet::fakekubelet {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool isCount(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::string commandHelp() {
  return R"(
Commands (stdin, one per line; each ends with a "done" event):
  wait RESOURCE [TIMEOUT_MS]          until RESOURCE registered and sent its device list
  wait-healthy RESOURCE N [TOTAL] [TIMEOUT_MS]
                                      until RESOURCE lists N healthy (and TOTAL) devices
  devices RESOURCE                    print the last device list
  options RESOURCE                    GetDevicePluginOptions
  prefer RESOURCE SIZE [AVAIL|-] [MUST]
                                      GetPreferredAllocation; AVAIL/MUST are comma-separated
                                      IDs ("-" or nothing: every healthy device)
  allocate RESOURCE IDS|N [IDS|N...]  Allocate, one container per argument: comma-separated
                                      IDs, or a count N chosen by GetPreferredAllocation
  restart [DOWN_MS]                   simulate a kubelet restart (sockets removed, back later)
  refuse on|off                       refuse or accept registrations from now on
  quit
)";
}

bool runCommand(FakeKubelet& k, EventLog& log, const std::string& line) {
  std::vector<std::string> a = split(line, ' ');
  if (a.empty() || a[0].starts_with("#")) return true;
  const std::string& cmd = a[0];
  auto arg = [&](size_t i, const std::string& def = "") { return i < a.size() ? a[i] : def; };
  auto ms = [&](size_t i, int def) {
    return std::chrono::milliseconds(isCount(arg(i)) ? std::stoi(arg(i)) : def);
  };
  bool ok = true;
  if (cmd == "quit") {
    log.emit("done", {{"cmd", cmd}, {"ok", true}}, "quit");
    return false;
  } else if (cmd == "wait" && a.size() >= 2) {
    ok = k.waitForDevices(a[1], ms(2, 10000));
  } else if (cmd == "wait-healthy" && a.size() >= 3 && isCount(a[2])) {
    int total = isCount(arg(3)) ? std::stoi(a[3]) : -1;
    ok = k.waitForHealthy(a[1], std::stoi(a[2]), total, ms(4, 10000));
  } else if (cmd == "devices" && a.size() >= 2) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : k.devices(a[1])) {
      list.push_back({{"id", d.id}, {"health", d.health}, {"numa", d.numa}});
    }
    log.emit("device_list", {{"resource", a[1]}, {"devices", list}},
             fmt::format("{}: {} devices", a[1], list.size()));
  } else if (cmd == "options" && a.size() >= 2) {
    ok = k.options(a[1]);
  } else if (cmd == "prefer" && a.size() >= 3 && isCount(a[2])) {
    std::vector<std::string> avail =
        arg(3, "-") == "-" ? std::vector<std::string>{} : split(a[3], ',');
    ok = k.preferred(a[1], avail, split(arg(4), ','), std::stoi(a[2]));
  } else if (cmd == "allocate" && a.size() >= 3) {
    std::vector<std::vector<std::string>> containers;
    for (size_t i = 2; i < a.size() && ok; ++i) {
      std::vector<std::string> ids;
      if (isCount(a[i])) {
        ok = k.preferred(a[1], {}, {}, std::stoi(a[i]), &ids);
      } else {
        ids = split(a[i], ',');
      }
      containers.push_back(ids);
    }
    if (ok) ok = k.allocate(a[1], containers);
  } else if (cmd == "restart") {
    ok = k.restart(ms(1, 0));
  } else if (cmd == "refuse" && (arg(1) == "on" || arg(1) == "off")) {
    k.setRefuse(a[1] == "on");
  } else {
    log.emit("done", {{"cmd", cmd}, {"ok", false}, {"error", "bad command: " + line}},
             "bad command: " + line);
    return true;
  }
  log.emit("done", {{"cmd", cmd}, {"ok", ok}}, fmt::format("{} {}", cmd, ok ? "ok" : "FAILED"));
  return true;
}

}  // namespace rdmanet::fakekubelet
