#pragma once
// The simnode manifest: everything `hack/simnode up` created, so `down` removes exactly that.
// Stored as ROOT/manifest.json (0600, written atomically after every step, so a failed `up`
// can be undone by `down`).

#include <filesystem>
#include <string>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::sim {

struct ManifestLink {
  std::string name{};  // host-side veth, named like the fake netdev
  std::string peer{};  // its other end, in the bridge namespace
  std::string pci{};   // the fake function it stands for
  std::string rdma{};  // RDMA device of that function, if any
};

struct Manifest {
  std::string marker{};  // "rdmanet-simnode:<random>", set as ifalias on every link we create
  std::string ifprefix{};
  std::string topology{};
  bool created_root = false;  // ROOT did not exist before `up`
  bool tree = false;          // ROOT/sys was written
  std::string netns{};        // the bridge namespace, empty if none
  std::string bridge{};       // the bridge inside it
  std::vector<ManifestLink> links{};
};

std::filesystem::path manifestPath(const std::filesystem::path& root);
// Error 100 when there is none, 6/7 when it does not parse.
Result<Manifest> loadManifest(const std::filesystem::path& root);
Status saveManifest(const std::filesystem::path& root, const Manifest& m);

}  // namespace rdmanet::sim
