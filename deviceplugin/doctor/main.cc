// rdmanet-doctor: the node's pre-training network checklist as one command (cli.h documents
// flags and exit codes). main only wires the real netlink socket; everything else is in
// rdmanet_doctor so tests drive it.
#include <ctime>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/net/libnl_netlink.h"
#include "deviceplugin/doctor/cli.h"

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    // DCB is read in the netns the doctor runs in (the host's). Without a socket the DCB checks
    // say UNKNOWN rather than failing the whole run.
    std::unique_ptr<rdmanet::LibnlNetlink> netlink;
    if (auto nl = rdmanet::LibnlNetlink::open(); nl.ok()) {
      netlink = std::move(nl).value();
    } else {
      std::cerr << "rdmanet-doctor: no netlink socket (" << nl.error().msg
                << "): DCB checks will be UNKNOWN\n";
    }
    return rdmanet::doctor::runCli(args, netlink.get(), static_cast<int64_t>(std::time(nullptr)),
                                   std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "rdmanet-doctor: " << e.what() << "\n";
    return 2;
  }
}
