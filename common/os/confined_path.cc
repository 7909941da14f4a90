#include "common/os/confined_path.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/os/make_dirs.h"

namespace rdmanet {
namespace {

namespace fs = std::filesystem;

// The components of `path` below `root`, or nullopt when it is not beneath it.
std::optional<std::vector<std::string>> componentsBelow(const fs::path& root,
                                                        const std::string& path) {
  if (root.empty() || !root.is_absolute() || path.empty() || path.front() != '/' ||
      path.find('\0') != std::string::npos) {
    return std::nullopt;
  }
  std::vector<std::string> parts;
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string part = path.substr(i, j - i);
    // One trailing slash is fine ("/var/log/"); any other empty component, ".", ".." is not.
    if (part.empty() && j != path.size()) return std::nullopt;
    if (part == "." || part == "..") return std::nullopt;
    if (!part.empty()) parts.push_back(std::move(part));
    i = j + 1;
  }
  std::vector<std::string> root_parts;
  for (const auto& p : root.lexically_normal()) {
    const std::string s = p.string();
    if (s != "/" && !s.empty()) root_parts.push_back(s);
  }
  if (parts.size() < root_parts.size()) return std::nullopt;
  for (size_t k = 0; k < root_parts.size(); ++k) {
    if (parts[k] != root_parts[k]) return std::nullopt;
  }
  return std::vector<std::string>(parts.begin() + static_cast<ptrdiff_t>(root_parts.size()),
                                  parts.end());
}

Error notBeneath(const fs::path& root, const std::string& path) {
  return makeError(
      ErrorCode::kInvalidConfig,
      fmt::format("{} is not beneath {} (absolute, without \".\" or \"..\")", path, root.string()));
}

Result<Fd> walk(const fs::path& root, const std::vector<std::string>& parts, size_t count,
                bool create, mode_t mode, const std::string& path) {
  if (create) RDMANET_RETURN_IF_ERROR(makeDirs(root, mode));
  Fd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return errnoError(ErrorCode::kIoFailure, errno, "open " + root.string());
  for (size_t k = 0; k < count; ++k) {
    const std::string& part = parts[k];
    if (create && ::mkdirat(dir.get(), part.c_str(), mode) != 0 && errno != EEXIST) {
      return errnoError(ErrorCode::kIoFailure, errno, fmt::format("create {} in {}", part, path));
    }
    Fd next(::openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      const int err = errno;
      // O_NOFOLLOW on a symlink fails with ELOOP, or ENOTDIR together with O_DIRECTORY.
      struct stat st {};
      if (::fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        return makeError(ErrorCode::kIoFailure,
                         fmt::format("{}: component \"{}\" is a symlink, which is never followed "
                                     "beneath {}",
                                     path, part, root.string()));
      }
      return errnoError(ErrorCode::kIoFailure, err, fmt::format("{}: open \"{}\"", path, part));
    }
    dir = std::move(next);
  }
  return dir;
}

}  // namespace

std::string ConfinedFile::viaFd() const {
  return fmt::format("/proc/self/fd/{}/{}", dir.get(), name);
}

bool isBeneath(const fs::path& root, const std::string& path, bool allow_root) {
  auto parts = componentsBelow(root, path);
  return parts && (allow_root || !parts->empty());
}

Result<Fd> openConfinedDir(const fs::path& root, const std::string& path, bool create,
                           mode_t mode) {
  auto parts = componentsBelow(root, path);
  if (!parts) return notBeneath(root, path);
  return walk(root, *parts, parts->size(), create, mode, path);
}

Result<ConfinedFile> resolveConfinedFile(const fs::path& root, const std::string& path,
                                         bool create_dirs, mode_t dir_mode) {
  auto parts = componentsBelow(root, path);
  if (!parts || parts->empty() || path.back() == '/') return notBeneath(root, path);
  RDMANET_ASSIGN_OR_RETURN(Fd dir,
                           walk(root, *parts, parts->size() - 1, create_dirs, dir_mode, path));
  // O_PATH fds serve openat and /proc/self/fd lookups, not reads: reopen the last one usable.
  Fd real(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (real.get() < 0) return errnoError(ErrorCode::kIoFailure, errno, "open parent of " + path);
  return ConfinedFile{.dir = std::move(real), .name = parts->back()};
}

Result<Fd> openRegularAt(int dir, const std::string& name, int flags, mode_t mode,
                         const std::string& what) {
  Fd fd(::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
  if (fd.get() < 0) {
    if (errno == ELOOP) {
      return makeError(ErrorCode::kIoFailure,
                       fmt::format("{} is a symlink, which is never followed", what));
    }
    return errnoError(ErrorCode::kIoFailure, errno, "open " + what);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errnoError(ErrorCode::kIoFailure, errno, "stat " + what);
  if (!S_ISREG(st.st_mode)) {
    return makeError(ErrorCode::kIoFailure, fmt::format("{} is not a regular file", what));
  }
  return fd;
}

}  // namespace rdmanet
