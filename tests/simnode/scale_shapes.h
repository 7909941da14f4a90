#pragma once
// The scaling node in each shape that real drivers give an RDMA NIC's functions, for the tests
// that bound a scan's sysfs cost (they count operations through the Sysfs seam) and for
// bench/dp_scale.sh (bench/lib.sh writes the same topology).
//
// The node: two sockets, each with two PCIe switches holding a dual-port NIC and a GPU, so 8 PFs
// with `vfs_per_pf` VFs each (16 VFs per PF: 128 VFs; 127: 1016).

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "tests/simnode/build_node.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::sim {

enum class ScaleShape {
  kMlx5,           // mlx5: an RDMA device per function, VFs included (the default)
  kMlx5NoVfRdma,   // mlx5 VFs with no RDMA device (mlx5_ib not loaded for them)
  kRxe,            // Soft-RoCE on every PF and VF netdev and on a macvlan/ipvlan upper of each
  kVfRdmaInPods,   // exclusive RDMA netns mode: every VF's RDMA device is in a pod's netns
  kVfRdmaNoClass,  // VFs' RDMA devices under their function but missing from the class
};

inline constexpr std::array kScaleShapes = {ScaleShape::kMlx5, ScaleShape::kMlx5NoVfRdma,
                                            ScaleShape::kRxe, ScaleShape::kVfRdmaInPods,
                                            ScaleShape::kVfRdmaNoClass};

// "mlx5", "mlx5-no-vf-rdma", "rxe", "vf-rdma-in-pods", "vf-rdma-no-class" (bench/lib.sh's names).
std::string_view shapeName(ScaleShape shape);

// shapeName() as an identifier ('_' for '-'), for parameterised test names.
std::string shapeIdentifier(ScaleShape shape);

// The topology JSON (topology_model.h) of the scaling node in `shape`.
std::string scaleTopologyJson(ScaleShape shape, int vfs_per_pf);

// The scaling node written as a fake sysfs tree in a fresh temp dir (removed with it).
struct ScaleTree {
  std::unique_ptr<TempDir> dir;
  BuiltNode built;

  const std::filesystem::path& root() const { return dir->path(); }
};
// Throws on a build failure (test code).
ScaleTree buildScaleTree(ScaleShape shape, int vfs_per_pf);
// The same, built once per process for each shape and size and kept until exit (a 1016-VF node
// is some 100k files): for suites that only read the tree. Not thread-safe.
const ScaleTree& sharedScaleTree(ScaleShape shape, int vfs_per_pf);

}  // namespace rdmanet::sim
