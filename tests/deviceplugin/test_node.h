#pragma once
// A simulated node for device plugin unit tests: the repo's default topology (or another one)
// written as a fake sysfs tree in a per-test temp dir, then scanned with the real inventory code.

#include <filesystem>
#include <string>

#include "common/inventory/node.h"
#include "tests/simnode/build_node.h"
#include "tests/simnode/sim_tree.h"

namespace rdmanet::dp::testing {

class TestNode {
 public:
  // `topology` is a file under hack/topologies/ ("default.json").
  explicit TestNode(const std::string& topology = "default.json");
  ~TestNode();
  TestNode(const TestNode&) = delete;
  TestNode& operator=(const TestNode&) = delete;

  const NodeInventory& inventory() const { return inv_; }
  const sim::BuiltNode& built() const { return built_; }
  sim::SimTree& tree() { return *tree_; }
  const std::filesystem::path& root() const { return root_; }
  // Re-reads the tree (after editing it).
  void rescan();

  // Built names: PF `pf` (0-based, over all NICs in order) and its VF `vf`.
  PciAddress pf(int pf) const;
  PciAddress vf(int pf, int vf) const;
  std::string pfNetdev(int pf) const;

 private:
  std::filesystem::path root_;
  std::unique_ptr<sim::SimTree> tree_;
  sim::BuiltNode built_;
  NodeInventory inv_;
};

// A fresh empty directory under the test temp dir, removed by the caller (or left for
// debugging).
std::filesystem::path makeTempDir(const std::string& tag);

}  // namespace rdmanet::dp::testing
