#include "tests/simnode/scale_shapes.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "tests/simnode/sim_tree.h"
#include "tests/simnode/topology_model.h"

namespace rdmanet::sim {

std::string_view shapeName(ScaleShape shape) {
  switch (shape) {
    case ScaleShape::kMlx5:
      return "mlx5";
    case ScaleShape::kMlx5NoVfRdma:
      return "mlx5-no-vf-rdma";
    case ScaleShape::kRxe:
      return "rxe";
    case ScaleShape::kVfRdmaInPods:
      return "vf-rdma-in-pods";
    case ScaleShape::kVfRdmaNoClass:
      return "vf-rdma-no-class";
  }
  return "?";
}

std::string shapeIdentifier(ScaleShape shape) {
  std::string id(shapeName(shape));
  std::replace(id.begin(), id.end(), '-', '_');
  return id;
}

namespace {

// The NIC keys (topology_model.h) that make each shape.
std::string_view shapeKeys(ScaleShape shape) {
  switch (shape) {
    case ScaleShape::kMlx5:
      return "";
    case ScaleShape::kMlx5NoVfRdma:
      return R"(, "vf_rdma": false)";
    case ScaleShape::kRxe:
      return R"(, "rdma_kind": "rxe")";
    case ScaleShape::kVfRdmaInPods:
      return R"(, "vf_rdma_at": "other-netns")";
    case ScaleShape::kVfRdmaNoClass:
      return R"(, "vf_rdma_at": "no-class")";
  }
  return "";
}

}  // namespace

std::string scaleTopologyJson(ScaleShape shape, int vfs_per_pf) {
  auto nic = [&](std::string_view name) {
    return fmt::format(
        R"({{"switch": {{"downstream": [{{"nic": {{"name": "{}", "ports": 2, "vfs_per_port": {},
        "total_vfs": {}{}}}}}, {{"gpu": {{}}}}]}}}})",
        name, vfs_per_pf, vfs_per_pf, shapeKeys(shape));
  };
  return fmt::format(
      R"({{"name": "scale-8x{}-{}", "host_bridges": [
  {{"domain": 0, "bus": "0x00", "numa_node": 0, "root_ports": [{}, {}]}},
  {{"domain": 0, "bus": "0x80", "numa_node": 1, "root_ports": [{}, {}]}}]}})",
      vfs_per_pf, shapeName(shape), nic("ens1"), nic("ens2"), nic("ens3"), nic("ens4"));
}

ScaleTree buildScaleTree(ScaleShape shape, int vfs_per_pf) {
  // In memory where there is a tmpfs: a 1016-VF node is some 100k small files, which a disk
  // under load takes minutes to write and remove.
  std::error_code ec;
  const std::string base =
      std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                                                                       : "";
  ScaleTree out{.dir = std::make_unique<TempDir>("rdmanet-scale", base), .built = {}};
  auto topo = parseTopology(scaleTopologyJson(shape, vfs_per_pf));
  if (!topo.ok()) throw std::runtime_error("scale topology: " + topo.error().msg);
  SimTree tree(out.dir->path());
  auto built = buildNode(*topo, tree);
  if (!built.ok()) throw std::runtime_error("scale node: " + built.error().msg);
  out.built = std::move(built).value();
  return out;
}

const ScaleTree& sharedScaleTree(ScaleShape shape, int vfs_per_pf) {
  // Destroyed at exit, which removes the trees.
  static std::map<std::pair<ScaleShape, int>, ScaleTree> cache;
  auto it = cache.find({shape, vfs_per_pf});
  if (it == cache.end()) {
    it = cache.emplace(std::pair{shape, vfs_per_pf}, buildScaleTree(shape, vfs_per_pf)).first;
  }
  return it->second;
}

}  // namespace rdmanet::sim
