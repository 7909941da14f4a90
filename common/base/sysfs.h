#pragma once
// Sysfs: read access to a sysfs tree below a root directory that plays "/".
//
// With root R, "/sys/bus/pci/devices" is read at R/sys/bus/pci/devices. Production uses "/";
// tests and the simulated node point it at a fake tree with the kernel's real shape (symlinks
// included), so the real parsing code runs against them. All paths passed in are absolute
// paths as seen on a real machine ("/sys/..."); the class never follows ".." out of the root
// because callers build paths only from validated names.
//
// Every filesystem operation goes through one of the methods below, and each is reported to an
// optional SysfsObserver: that is how tests bound the cost of a node scan by counting (opens,
// listings, link reads per path) instead of timing it.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet {

// The kinds of filesystem operation a Sysfs makes.
enum class SysfsOp {
  kOpen,       // read(), readOpt(), readInt(), readBytes(): one open(2), successful or not
  kStat,       // exists()
  kList,       // list(): one directory listing
  kReadLink,   // resolveLink(), linkName(): one readlink(2)
  kCanonical,  // canonical(): a full path resolution (a readlink per component)
};

// Sees each operation as it is made, with the in-tree path it was made on. Called on the
// caller's thread; an observer shared across threads synchronises itself.
class SysfsObserver {
 public:
  virtual ~SysfsObserver() = default;
  virtual void onSysfsOp(SysfsOp op, std::string_view abs) = 0;
  // A name discovery found under `dir` and refused (common/inventory: not printable ASCII), so
  // that whoever runs the scan can say so; the name is raw bytes. Nothing by default.
  virtual void onRefusedName(std::string_view /*dir*/, std::string_view /*name*/) {}
};

class Sysfs {
 public:
  // `observer`, if any, must outlive this Sysfs and its copies.
  explicit Sysfs(std::filesystem::path root = "/", SysfsObserver* observer = nullptr);

  const std::filesystem::path& root() const { return root_; }
  // The host path of an absolute in-tree path: path("/sys/class/net") == root/sys/class/net.
  std::filesystem::path path(std::string_view abs) const;
  // Maps a host path below the root back to its in-tree form ("/sys/..."); nullopt if outside.
  std::optional<std::string> inTree(const std::filesystem::path& host) const;

  // Contents of a small attribute file, trailing newline stripped. Error 100 if absent.
  Result<std::string> read(std::string_view abs) const;
  // The file's bytes as they are (binary config space, no newline stripped). Error 100 if absent.
  Result<std::string> readBytes(std::string_view abs, size_t max_bytes) const;
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
  // The in-tree path of `abs` with every link on the way followed, as realpath(3) gives it;
  // nullopt if it does not exist or resolves outside the root.
  std::optional<std::string> canonical(std::string_view abs) const;
  // Tells the observer, if any, that discovery refused `name` found under `dir` (no filesystem
  // operation: the listing that found it was one).
  void refused(std::string_view dir, std::string_view name) const {
    if (observer_ != nullptr) observer_->onRefusedName(dir, name);
  }

 private:
  void seen(SysfsOp op, std::string_view abs) const {
    if (observer_ != nullptr) observer_->onSysfsOp(op, abs);
  }

  std::filesystem::path root_;
  SysfsObserver* observer_ = nullptr;
};

}  // namespace rdmanet
