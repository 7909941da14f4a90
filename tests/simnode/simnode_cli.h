#pragma once
// The commands of the rdmanet-simnode tool (behind hack/simnode). Each returns the process exit
// code and reports on stdout/stderr.
//
//   up    writes ROOT/sys from a topology and, unless tree_only, creates for every netdev a real
//         veth in the host netns with that exact name (ifalias = the manifest's marker), whose
//         other end is enslaved to a bridge in a private netns; the veth's real ifindex and MAC
//         are written into the fake tree. Needs root unless tree_only.
//   down  removes exactly what ROOT/manifest.json lists; an interface whose ifalias is not our
//         marker is left alone and reported (exit code 2). Nothing to do is success.
//   link  sets a netdev's link up or down: the switch-side veth end (so the carrier really
//         drops, wherever the host end is now), the fake tree's operstate/carrier and its RDMA
//         port state together.
//   show  prints the inventory of ROOT (scanNode) as tables.

#include <filesystem>
#include <ostream>
#include <string>

namespace rdmanet::sim {

inline constexpr const char* kDefaultSimRoot = "/run/rdmanet-simnode";

struct UpOptions {
  std::filesystem::path root = kDefaultSimRoot;
  std::filesystem::path topology{};  // empty: hack/topologies/default.json of this source tree
  std::string ifprefix{};            // overrides the topology's; [a-z0-9], up to 7 characters
  bool tree_only = false;            // no veths, no namespace (no root needed)
};

int simnodeUp(const UpOptions& opts);
int simnodeDown(const std::filesystem::path& root);
int simnodeLink(const std::filesystem::path& root, const std::string& ifname, bool up);
int simnodeShow(const std::filesystem::path& root, std::ostream& out);

}  // namespace rdmanet::sim
