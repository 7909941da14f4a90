// rdmanet: the CNI plugin binary. Wires the real dependencies and calls the library (STYLE.md:
// thin mains); everything else lives in rdmanet_cni.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include "cni/plugin.h"
#include "common/net/libnl_netlink.h"

namespace {

std::optional<std::string> getEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : fallback;
}

}  // namespace

int main() {
  using namespace rdmanet;
  using namespace rdmanet::cni;
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  Logger log;
  auto host = LibnlNetlink::open();
  if (!host.ok()) {
    std::fputs(("{\"code\":101,\"msg\":\"" + host.error().msg + "\"}\n").c_str(), stdout);
    return 1;
  }
  SetnsRunner runner;
  ExecIpam ipam;
  PluginDeps deps{.host = **host,
                  .runner = runner,
                  .ipam = ipam,
                  .sysfs = Sysfs(envOr("RDMANET_SYSFS_ROOT", "/")),
                  .store = StateStore(envOr("RDMANET_STATE_DIR", "/var/lib/cni/rdmanet")),
                  .log = log};
  const Invocation out = runCni(deps, getEnv, input);
  std::fwrite(out.stdout_data.data(), 1, out.stdout_data.size(), stdout);
  std::fflush(stdout);
  return out.exit_code;
}
