#include "deviceplugin/daemon/subcommands.h"

#include <ctime>
#include <iostream>
#include <memory>

#include "common/net/libnl_netlink.h"
#include "deviceplugin/daemon/install_cni.h"
#include "deviceplugin/doctor/cli.h"

namespace rdmanet::dp {

int runDoctorCommand(const std::vector<std::string>& args) {
  // DCB is read in the netns we run in (the host's, as the DaemonSet uses hostNetwork). Without
  // a socket the DCB checks say UNKNOWN rather than failing the whole run, as in rdmanet-doctor.
  std::unique_ptr<LibnlNetlink> netlink;
  if (auto nl = LibnlNetlink::open(); nl.ok()) {
    netlink = std::move(nl).value();
  } else {
    std::cerr << "rdmanet-doctor: no netlink socket (" << nl.error().msg
              << "): DCB checks will be UNKNOWN\n";
  }
  return doctor::runCli(args, netlink.get(), static_cast<int64_t>(std::time(nullptr)), std::cout,
                        std::cerr);
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

}  // namespace rdmanet::dp
