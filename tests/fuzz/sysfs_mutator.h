#pragma once
// For the sysfs fuzz targets: one simulated node's sysfs tree (tests/simnode: a PF with SR-IOV,
// one of its VFs, a GPU, their netdevs and mlx5-style RDMA devices with GID tables, a Soft-RoCE
// device, behind a PCIe root port), built once per process, and a fuzz input applied to it as edits
// of its attribute files, undone after each run.
//
// Input: records of [u16 selector][content up to a NUL or the end]. The selector picks one of the
// tree's regular files (sorted by path, modulo their count); with its top bit set the file is
// removed, else its content becomes the record's. Every record's content is also returned, for
// the string parsers. An empty input leaves the tree as the simulated node has it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "tests/simnode/sim_tree.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::fuzz {

class SysfsMutator {
 public:
  SysfsMutator() : tree_(dir_.path()) {
    using sim::pci;
    const auto rp = tree_.addBridge(tree_.addHostBridge(0, 0x80), {.address = pci("0000:80:01.0"),
                                                                   .secondary_bus = 0x81,
                                                                   .subordinate_bus = 0x81,
                                                                   .acs_redirect = true});
    tree_.addFunction(rp, {.address = pci("0000:81:00.0"),
                           .iommu_group = 40,
                           .sriov_totalvfs = 4,
                           .sriov_numvfs = 1});
    tree_.addFunction(rp, {.address = pci("0000:81:00.2"), .device = "101e", .iommu_group = 41});
    tree_.addFunction(rp, {.address = pci("0000:81:00.4"),
                           .vendor = "10de",
                           .device = "20b5",
                           .class_code = 0x030200,
                           .driver = "nvidia"});
    tree_.linkVf(pci("0000:81:00.0"), pci("0000:81:00.2"), 0);
    tree_.addNetdev(pci("0000:81:00.0"),
                    {.name = "ens1f0np0", .ifindex = 4, .mac = "0c:42:a1:00:00:01", .mtu = 9000});
    tree_.addNetdev(pci("0000:81:00.2"),
                    {.name = "ens1f0v0", .ifindex = 9, .mac = "0c:42:a1:00:00:10"});
    sim::RdmaPortSpec port;
    port.gids = {{.index = 0,
                  .gid = "fe80:0000:0000:0000:0e42:a1ff:fe00:0001",
                  .type = "IB/RoCE v1",
                  .ndev = "ens1f0np0"},
                 {.index = 1,
                  .gid = "fe80:0000:0000:0000:0e42:a1ff:fe00:0001",
                  .type = "RoCE v2",
                  .ndev = "ens1f0np0"},
                 {.index = 3,
                  .gid = "0000:0000:0000:0000:0000:ffff:c0a8:6402",
                  .type = "RoCE v2",
                  .ndev = "ens1f0np0"}};
    tree_.addRdmaDevice(pci("0000:81:00.0"),
                        {.name = "mlx5_0", .ports = {port}, .uverbs = 0, .umad = 0});
    tree_.addRdmaDevice(pci("0000:81:00.2"), {.name = "mlx5_2", .uverbs = 2});
    tree_.addVirtualNetdev({.name = "veth0", .ifindex = 20, .mac = "02:00:00:00:00:20"});
    tree_.addSoftRdma({.name = "rxe0"}, "veth0");
    const auto root = tree_.root();
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / "sys")) {
      if (e.is_symlink() || !e.is_regular_file()) continue;
      files_.push_back({e.path(), sim::readFileText(e.path())});
    }
    std::sort(files_.begin(), files_.end());
    // For writing seeds: which selector picks which file.
    if (std::getenv("RDMANET_FUZZ_LIST_FILES") != nullptr) {
      for (size_t i = 0; i < files_.size(); ++i) {
        std::printf("%zu %s\n", i, files_[i].first.lexically_relative(root).c_str());
      }
    }
  }

  const std::filesystem::path& root() const { return tree_.root(); }

  // Applies `input` (see above); returns each record's content.
  std::vector<std::string_view> apply(std::span<const uint8_t> input) {
    std::vector<std::string_view> contents;
    while (input.size() >= 2 && !files_.empty()) {
      const uint16_t sel = static_cast<uint16_t>(input[0] | (input[1] << 8));
      input = input.subspan(2);
      size_t len = 0;
      while (len < input.size() && input[len] != 0) ++len;
      const std::string_view content(reinterpret_cast<const char*>(input.data()), len);
      input = input.subspan(len < input.size() ? len + 1 : len);
      const size_t i = (sel & 0x7fff) % files_.size();
      std::error_code ec;
      if (sel & 0x8000) {
        std::filesystem::remove(files_[i].first, ec);
      } else {
        std::ofstream(files_[i].first, std::ios::binary | std::ios::trunc) << content;
      }
      touched_.push_back(i);
      contents.push_back(content);
    }
    return contents;
  }

  // Puts back every file apply() changed.
  void restore() {
    for (size_t i : touched_) {
      std::ofstream(files_[i].first, std::ios::binary | std::ios::trunc) << files_[i].second;
    }
    touched_.clear();
  }

 private:
  sim::TempDir dir_{"rdmanet-sysfs-fuzz"};
  sim::SimTree tree_;
  std::vector<std::pair<std::filesystem::path, std::string>> files_;
  std::vector<size_t> touched_;
};

}  // namespace rdmanet::fuzz
