// rdmanet-doctor: the node's pre-training network checklist as one command (cli.h documents
// flags and exit codes; probe/probe.h the `probe` subcommand, preflight/preflight.h `preflight`).
// main only opens the real seams (host_seams.h: netlink, ethtool, verbs; podnet's for `pods`);
// everything else is in rdmanet_doctor so tests drive it.
#include <ctime>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "deviceplugin/doctor/cli.h"
#include "deviceplugin/doctor/host_seams.h"
#include "deviceplugin/doctor/preflight/preflight.h"
#include "deviceplugin/doctor/probe/probe.h"

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args.front() == "pods") {
      return rdmanet::doctor::runPodsCli({args.begin() + 1, args.end()},
                                         rdmanet::doctor::hostPodsCliDeps(&std::cerr), std::cout,
                                         std::cerr);
    }
    if (!args.empty() && args.front() == "probe") {
      return rdmanet::doctor::runProbeCli({args.begin() + 1, args.end()}, std::cout, std::cerr);
    }
    if (!args.empty() && args.front() == "preflight") {
      return rdmanet::doctor::preflight::runHostPreflight({args.begin() + 1, args.end()}, std::cout,
                                                          std::cerr);
    }
    // Read in the netns the doctor runs in (the host's); a seam that cannot be opened makes its
    // checks UNKNOWN rather than failing the whole run.
    const auto seams = rdmanet::doctor::openHostSeams(&std::cerr);
    return rdmanet::doctor::runCli(
        args,
        {.netlink = seams.netlink.get(), .verbs = seams.verbs.get(), .pause = seams.pause.get()},
        rdmanet::wallSeconds(), std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "rdmanet-doctor: " << e.what() << "\n";
    return 2;
  }
}
