#include "tests/deviceplugin/test_node.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <stdexcept>

#include "common/base/sysfs.h"
#include "tests/simnode/topology_model.h"

namespace rdmanet::dp::testing {

namespace fs = std::filesystem;

fs::path makeTempDir(const std::string& tag) {
  // tmpfs when there is one: a simulated node is ~1,500 files and links, and on a shared,
  // disk-backed /tmp creating them dominates the test's run time.
  std::error_code ec;
  fs::path base =
      fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  std::string tmpl = (base / ("rdmanet-dp-" + tag + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

TestNode::TestNode(const std::string& topology) : root_(makeTempDir("node")) {
  auto topo = sim::loadTopology(fs::path(RDMANET_SOURCE_DIR) / "hack/topologies" / topology);
  if (!topo.ok()) throw std::runtime_error("topology: " + topo.error().msg);
  tree_ = std::make_unique<sim::SimTree>(root_);
  auto built = sim::buildNode(*topo, *tree_);
  if (!built.ok()) throw std::runtime_error("buildNode: " + built.error().msg);
  built_ = std::move(built).value();
  rescan();
}

TestNode::~TestNode() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void TestNode::rescan() { inv_ = scanNode(Sysfs(root_)); }

PciAddress TestNode::pf(int pf) const {
  int i = pf;
  for (const auto& nic : built_.nics) {
    if (i < static_cast<int>(nic.pfs.size())) return nic.pfs[i];
    i -= static_cast<int>(nic.pfs.size());
  }
  throw std::out_of_range("pf");
}

PciAddress TestNode::vf(int pf, int vf) const {
  int i = pf;
  for (const auto& nic : built_.nics) {
    if (i < static_cast<int>(nic.pfs.size())) return nic.vfs.at(i).at(vf);
    i -= static_cast<int>(nic.pfs.size());
  }
  throw std::out_of_range("pf");
}

std::string TestNode::pfNetdev(int pf) const {
  PciAddress a = this->pf(pf);
  for (const auto& n : built_.netdevs) {
    if (n.pci == a) return n.name;
  }
  throw std::out_of_range("pf netdev");
}

}  // namespace rdmanet::dp::testing
