#pragma once
// Sysfs: read access to a sysfs tree below a root directory that plays "/".
//
// With root R, "/sys/bus/pci/devices" is read at R/sys/bus/pci/devices. Production uses "/";
// tests and the simulated node point it at a fake tree with the kernel's real shape (symlinks
// included), so the real parsing code runs against them. All paths passed in are absolute
// paths as seen on a real machine ("/sys/..."); the class never follows ".." out of the root
// because callers build paths only from validated names.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet {

class Sysfs {
 public:
  explicit Sysfs(std::filesystem::path root = "/");

  const std::filesystem::path& root() const { return root_; }
  // The host path of an absolute in-tree path: path("/sys/class/net") == root/sys/class/net.
  std::filesystem::path path(std::string_view abs) const;
  // Maps a host path below the root back to its in-tree form ("/sys/..."); nullopt if outside.
  std::optional<std::string> inTree(const std::filesystem::path& host) const;

  // Contents of a small attribute file, trailing newline stripped. Error 100 if absent.
  Result<std::string> read(std::string_view abs) const;
  // Like read(), but nullopt for a missing or unreadable file.
  std::optional<std::string> readOpt(std::string_view abs) const;
  // A decimal or 0x-hex integer attribute; nullopt if missing or not a number.
  std::optional<long long> readInt(std::string_view abs) const;
  bool exists(std::string_view abs) const;
  // Entry names of a directory, sorted; empty if it does not exist.
  std::vector<std::string> list(std::string_view abs) const;
  // The in-tree absolute path a symlink resolves to (lexically, relative to its directory),
  // e.g. "/sys/devices/pci0000:80/0000:80:00.0/0000:81:00.0". nullopt if not a link or dangling
  // targets are not resolved: a broken link still resolves lexically; use exists() to check.
  std::optional<std::string> resolveLink(std::string_view abs) const;
  // Just the last component of a symlink's target (e.g. "igb" for a driver link).
  std::optional<std::string> linkName(std::string_view abs) const;

 private:
  std::filesystem::path root_;
};

}  // namespace rdmanet
