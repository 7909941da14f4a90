#pragma once
// What a piece of work costs in sysfs operations, and the bound every node-wide pass must keep:
// linear in the node's devices. Counted through the Sysfs seam (SysfsCounter), so the bound is
// exact and deterministic, not a timing.
//
//   auto small = sysfsCost(tree128.root(), [](const Sysfs& s) { scanNode(s); });
//   auto big = sysfsCost(tree1016.root(), [](const Sysfs& s) { scanNode(s); });
//   expectLinear("scanNode", small, big);

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "tests/fakes/sysfs_counter.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet {

struct SysfsCost {
  uint64_t total = 0;
  uint64_t opens = 0, stats = 0, lists = 0, readlinks = 0, canonicals = 0;
  std::string hottest_path{};
  uint64_t hottest = 0;  // touches of hottest_path
};

inline SysfsCost costOf(const SysfsCounter& counter) {
  auto [path, n] = counter.hottest();
  return SysfsCost{.total = counter.total(),
                   .opens = counter.count(SysfsOp::kOpen),
                   .stats = counter.count(SysfsOp::kStat),
                   .lists = counter.count(SysfsOp::kList),
                   .readlinks = counter.count(SysfsOp::kReadLink),
                   .canonicals = counter.count(SysfsOp::kCanonical),
                   .hottest_path = std::move(path),
                   .hottest = n};
}

// The cost of work(sysfs) on the tree at `root`.
template <typename Work>
SysfsCost sysfsCost(const std::filesystem::path& root, Work&& work) {
  SysfsCounter counter;
  const Sysfs sysfs(root, &counter);
  work(sysfs);
  return costOf(counter);
}

// The cost of work(state) alone, where state = setup(sysfs) is made first and not counted
// (a resync of a core that has already scanned).
template <typename Setup, typename Work>
SysfsCost sysfsCostAfter(const std::filesystem::path& root, Setup&& setup, Work&& work) {
  SysfsCounter counter;
  const Sysfs sysfs(root, &counter);
  auto state = setup(sysfs);
  counter.reset();
  work(state);
  return costOf(counter);
}

// 8x the devices may cost at most this much more: linear, with room for the fixed part.
inline constexpr double kMaxGrowthFor8x = 8.5;
// No path is touched more often than this in one pass, whatever the node's size (a PF's
// directory is touched 6 times by its rescan, which reads it twice). A path touched once per
// device (a class listing, rdma_cm's numbers), the quadratic pattern in small, reaches 16 on
// the small node.
inline constexpr uint64_t kMaxTouchesPerPath = 8;

inline std::string costRow(std::string_view what, const SysfsCost& c) {
  return fmt::format(
      "{}: {} ops ({} opens, {} stats, {} listings, {} link reads, {} resolves); "
      "hottest {} x{}",
      what, c.total, c.opens, c.stats, c.lists, c.readlinks, c.canonicals, c.hottest_path,
      c.hottest);
}

// Fails unless `big` (8x the devices of `small`) costs at most kMaxGrowthFor8x times as much and
// no path was touched more than kMaxTouchesPerPath times in either. Prints both rows, so a run
// shows the table.
inline void expectLinear(std::string_view what, const SysfsCost& small, const SysfsCost& big) {
  const double ratio = small.total ? static_cast<double>(big.total) / small.total : 0;
  std::printf("[ cost ] %s | %s | x%.2f\n", costRow(what, small).c_str(),
              costRow("8x", big).c_str(), ratio);
  EXPECT_GT(small.total, 0u) << what << " made no sysfs operation";
  EXPECT_LE(ratio, kMaxGrowthFor8x) << what << " grew superlinearly: " << small.total << " -> "
                                    << big.total << " operations for 8x the devices";
  EXPECT_LE(small.hottest, kMaxTouchesPerPath) << what << ": " << small.hottest_path;
  EXPECT_LE(big.hottest, kMaxTouchesPerPath) << what << ": " << big.hottest_path;
}

// The scaling node's two sizes the cost tests compare: 128 and 1016 VFs on 8 PFs.
inline constexpr int kSmallVfsPerPf = 16;
inline constexpr int kBigVfsPerPf = 127;

// expectLinear() of work(sysfs) on the two sizes of `shape`, named "<shape> <what>".
template <typename Work>
void expectLinearOnShape(sim::ScaleShape shape, std::string_view what, Work work) {
  expectLinear(fmt::format("{} {}", sim::shapeName(shape), what),
               sysfsCost(sim::sharedScaleTree(shape, kSmallVfsPerPf).root(), work),
               sysfsCost(sim::sharedScaleTree(shape, kBigVfsPerPf).root(), work));
}

}  // namespace rdmanet
