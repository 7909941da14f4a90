#include "common/os/held_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace rdmanet {

namespace fs = std::filesystem;

namespace {

// Attempts when the path keeps being replaced under us: each retry means another process
// removed or replaced the file between our open and our flock, which only a sweep or a release
// does.
constexpr int kReplacedRetries = 16;

Error ioError(int err, std::string_view what, const fs::path& p) {
  return errnoError(ErrorCode::kIoFailure, err, fmt::format("{} {}", what, p.string()));
}

// Whether the path still names the inode `fd` holds (lstat: the path's own entry, as O_NOFOLLOW
// opened it).
bool sameInode(int fd, const fs::path& p) {
  struct stat held {
  }, named{};
  return ::fstat(fd, &held) == 0 && ::lstat(p.c_str(), &named) == 0 &&
         held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

int lockWithRetry(int fd, int op) {
  int rc;
  do {
    rc = ::flock(fd, op);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

}  // namespace

Result<Hold> holdFile(const fs::path& path, HoldMode mode) {
  const bool create = mode != HoldMode::kExistingTry;
  // O_NONBLOCK: opening a FIFO planted at the path must not wait for a writer.
  const int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (create ? O_RDWR | O_CREAT : O_RDONLY);
  for (int attempt = 0; attempt < kReplacedRetries; ++attempt) {
    Fd fd(::open(path.c_str(), flags, 0600));
    if (fd.get() < 0) {
      if (!create && (errno == ENOENT || errno == ELOOP || errno == ENXIO)) {
        return Hold{.gone = true};
      }
      if (create && (errno == ELOOP || errno == ENXIO)) {  // a symlink, or a socket
        (void)::unlink(path.c_str());
        continue;
      }
      return ioError(errno, "cannot open", path);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return ioError(errno, "cannot stat", path);
    if (!S_ISREG(st.st_mode)) {
      if (!create) return Hold{.gone = true};
      (void)::unlink(path.c_str());
      continue;
    }
    const int op = LOCK_EX | (mode == HoldMode::kCreateWait ? 0 : LOCK_NB);
    if (lockWithRetry(fd.get(), op) != 0) {
      if (errno == EWOULDBLOCK) return Hold{.busy = true};
      return ioError(errno, "cannot lock", path);
    }
    if (sameInode(fd.get(), path)) return Hold{.fd = std::move(fd)};
    if (!create) return Hold{.gone = true};
  }
  return makeError(ErrorCode::kIoFailure,
                   fmt::format("{} keeps being replaced while it is opened", path.string()));
}

int sweepUnheld(const fs::path& dir, const std::function<bool(std::string_view name)>& is_ours) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_ours(it->path().filename().string())) continue;
    auto h = holdFile(it->path(), HoldMode::kExistingTry);
    if (!h.ok() || !h->held()) continue;  // held by a live process, gone, or not ours to open
    // Unlinked while still held, so a creator that opened this inode meanwhile finds it
    // unlinked once it gets the flock, and starts again.
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace rdmanet
