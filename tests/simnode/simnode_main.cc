// rdmanet-simnode: builds, flaps, shows and removes a simulated node (see simnode_cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "tests/simnode/simnode_cli.h"

namespace {

constexpr const char* kUsage =
    "usage: rdmanet-simnode up [--topology FILE] [--root DIR] [--ifprefix P] [--tree-only]\n"
    "       rdmanet-simnode down [--root DIR]\n"
    "       rdmanet-simnode link IFNAME up|down [--root DIR]\n"
    "       rdmanet-simnode show [--root DIR]\n";

int usage() {
  std::cerr << kUsage;
  return 64;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  const std::string cmd = args[0];
  rdmanet::sim::UpOptions up;
  std::vector<std::string> positional;
  for (size_t i = 1; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--root" && has_value) {
      up.root = args[++i];
    } else if (args[i] == "--topology" && has_value && cmd == "up") {
      up.topology = args[++i];
    } else if (args[i] == "--ifprefix" && has_value && cmd == "up") {
      up.ifprefix = args[++i];
    } else if (args[i] == "--tree-only" && cmd == "up") {
      up.tree_only = true;
    } else if (args[i].starts_with("--")) {
      return usage();
    } else {
      positional.push_back(args[i]);
    }
  }
  if (cmd == "up" && positional.empty()) return rdmanet::sim::simnodeUp(up);
  if (cmd == "down" && positional.empty()) return rdmanet::sim::simnodeDown(up.root);
  if (cmd == "show" && positional.empty()) return rdmanet::sim::simnodeShow(up.root, std::cout);
  if (cmd == "link" && positional.size() == 2 &&
      (positional[1] == "up" || positional[1] == "down")) {
    return rdmanet::sim::simnodeLink(up.root, positional[0], positional[1] == "up");
  }
  return usage();
} catch (const std::exception& e) {
  std::cerr << "rdmanet-simnode: " << e.what() << "\n";
  return 1;
}
