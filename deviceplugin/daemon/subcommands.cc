#include "deviceplugin/daemon/subcommands.h"

#include <fmt/format.h>

#include <ctime>
#include <iostream>
#include <memory>

#include "common/base/clock.h"
#include "common/cli/command_line.h"
#include "deviceplugin/daemon/install_cni.h"
#include "deviceplugin/doctor/cli.h"
#include "deviceplugin/doctor/host_seams.h"
#include "deviceplugin/doctor/preflight/preflight.h"
#include "deviceplugin/doctor/probe/probe.h"
#include "deviceplugin/pools/config.h"

namespace rdmanet::dp {

std::optional<int> runOneShot(const Flags& flags, std::string_view argv0) {
  if (flags.help) {
    std::cout << usage();
    return 0;
  }
  if (flags.version) {
    std::cout << "rdmanet-device-plugin " << cli::version() << "\n";
    return 0;
  }
  if (!flags.check_config.empty()) return runCheckConfig(flags.check_config);
  if (!flags.install_cni.empty()) return runInstallCni(argv0, flags.install_cni);
  return std::nullopt;
}

int runDoctorCommand(const std::vector<std::string>& args) {
  if (!args.empty() && args.front() == "probe") {
    return doctor::runProbeCli({args.begin() + 1, args.end()}, std::cout, std::cerr);
  }
  if (!args.empty() && args.front() == "preflight") {
    return doctor::preflight::runHostPreflight({args.begin() + 1, args.end()}, std::cout,
                                               std::cerr);
  }
  if (!args.empty() && args.front() == "pods") {
    return doctor::runPodsCli({args.begin() + 1, args.end()}, doctor::hostPodsCliDeps(&std::cerr),
                              std::cout, std::cerr);
  }
  // Read in the netns we run in (the host's, as the DaemonSet uses hostNetwork), opened as
  // rdmanet-doctor opens them: a seam that cannot be opened makes its checks UNKNOWN.
  const auto seams = doctor::openHostSeams(&std::cerr);
  return doctor::runCli(
      args,
      {.netlink = seams.netlink.get(), .verbs = seams.verbs.get(), .pause = seams.pause.get()},
      wallSeconds(), std::cout, std::cerr);
}

int runInstallCni(std::string_view argv0, const std::filesystem::path& dir) {
  auto self = executableDir(argv0);
  if (!self.ok()) {
    std::cerr << "rdmanet-device-plugin: --install-cni: " << self.error().msg << "\n";
    return 1;
  }
  const std::filesystem::path src = *self / kCniBinaryName;
  if (auto st = installCniBinary(src, dir); !st.ok()) {
    std::cerr << "rdmanet-device-plugin: --install-cni: " << st.error().msg << "\n";
    return 1;
  }
  std::cout << "installed " << src.string() << " as " << (dir / kCniBinaryName).string() << "\n";
  return 0;
}

int runCheckConfig(const std::filesystem::path& file) {
  auto cfg = loadConfigFile(file);
  if (!cfg.ok()) {
    std::cerr << "invalid config: " << cfg.error().msg << "\n";
    return 1;
  }
  std::cout << fmt::format("config OK: {} pools\n", cfg->pools.size());
  for (const auto& p : cfg->pools) {
    std::cout << fmt::format("  {} mode={} preferredAllocation={} selectors={}\n", p.fullName(),
                             poolModeName(p.mode), policyName(p.preferred_allocation),
                             p.selectors.size());
  }
  return 0;
}

}  // namespace rdmanet::dp
