// rdmanet: the CNI plugin binary. Wires the real dependencies and calls the library
// (CONTRIBUTING.md, "Layers": thin mains); everything else lives in rdmanet_cni.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cni/conf/json_util.h"
#include "cni/conf/limits.h"
#include "cni/conf/node_config.h"
#include "cni/conf/result_types.h"
#include "cni/conf/version.h"
#include "cni/plugin.h"
#include "common/base/result.h"
#include "common/net/libnl_netlink.h"

namespace {

std::optional<std::string> getEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// stdin with read(2), not std::cin: <iostream>'s static initialisation (streams, locale) is
// start-up work paid on every exec. A read error ends the input like EOF; the JSON parser
// then reports what is missing. Reading stops one byte past the limit, which parseNetConf
// refuses by name, so a huge input costs no memory.
std::string readStdin() {
  std::string data;
  char buf[16384];
  while (data.size() <= rdmanet::cni::kMaxConfigBytes) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : fallback;
}

// A failure before the library runs, as the CNI result the runtime parses (escaped: an error
// message may carry any byte).
int fail(const rdmanet::Error& e) {
  using namespace rdmanet::cni;
  const std::string out = dumpJson(errorToJson(e, std::string(kLatestVersion)));
  std::fputs((out + "\n").c_str(), stdout);
  return 1;
}

int run() {
  using namespace rdmanet;
  using namespace rdmanet::cni;
  const std::string input = readStdin();
  Logger log;
  auto host = LibnlNetlink::open();
  if (!host.ok()) return fail(host.error());
  const std::string state_dir = envOr("RDMANET_STATE_DIR", "/var/lib/cni/rdmanet");
  auto node = loadNodeConfig(state_dir);
  if (!node.ok()) return fail(node.error());
  SetnsRunner runner;
  const SteadyClock clock;
  ExecIpam ipam(clock, node->ipam_timeout);
  PluginDeps deps{.host = **host,
                  .runner = runner,
                  .ipam = ipam,
                  .sysfs = Sysfs(envOr("RDMANET_SYSFS_ROOT", "/")),
                  .store = StateStore(state_dir),
                  .log = log,
                  .node = *node,
                  .boot_id_file = envOr("RDMANET_BOOT_ID_FILE", "/proc/sys/kernel/random/boot_id"),
                  .clock = clock};
  const Invocation out = runCni(deps, getEnv, input);
  std::fwrite(out.stdout_data.data(), 1, out.stdout_data.size(), stdout);
  std::fflush(stdout);
  return out.exit_code;
}

}  // namespace

// The library reports failures as results; what escapes it (an allocation failure) is still a
// CNI error on stdout, not an abort the runtime sees as a crash with no message.
int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    return fail(rdmanet::makeError(rdmanet::ErrorCode::kInternal, e.what()));
  } catch (...) {
    return fail(rdmanet::makeError(rdmanet::ErrorCode::kInternal, "an unknown exception"));
  }
}
