#include "cni/held_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/os/atomic_file.h"

namespace fs = std::filesystem;

namespace rdmanet::cni {
namespace {

// holdFile attempts when the path keeps being replaced under us: each retry means another
// process removed or replaced the file in between, which only a sweep or a release does.
constexpr int kReplacedRetries = 16;

Error ioError(int err, const std::string& what) {
  return errnoError(ErrorCode::kIoFailure, err, what);
}

}  // namespace

Result<Hold> holdFile(const fs::path& path, HoldMode mode) {
  const bool create = mode != HoldMode::kExistingTry;
  const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0);
  for (int attempt = 0; attempt < kReplacedRetries; ++attempt) {
    const int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) {
      if (!create && errno == ENOENT) return Hold{.gone = true};
      return ioError(errno, "cannot open " + path.string());
    }
    const int op = LOCK_EX | (mode == HoldMode::kCreateWait ? 0 : LOCK_NB);
    int rc;
    do {
      rc = ::flock(fd, op);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int e = errno;
      ::close(fd);
      if (e == EWOULDBLOCK) return Hold{.busy = true};
      return ioError(e, "cannot lock " + path.string());
    }
    // Is the locked inode still the one the path names? Its holder may have removed it between
    // our open and our flock.
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      return Hold{.fd = fd};
    }
    ::close(fd);
    if (!create) return Hold{.gone = true};
  }
  return makeError(ErrorCode::kIoFailure,
                   fmt::format("{} keeps being replaced while it is opened", path.string()));
}

fs::path tempPathFor(const fs::path& path) { return atomicTempPath(path); }

Status writeFileAtomic(const fs::path& path, const std::string& data, mode_t mode) {
  // No fsync: the rename makes the update atomic for readers and survives a crash of the
  // plugin; what a power loss could lose (state of attachments whose pods, netns and VF
  // settings the reboot wipes too) is not worth a disk flush on every pod start.
  return rdmanet::writeFileAtomic(path, data, {.mode = mode, .durable = false});
}

int sweepUnheld(const fs::path& dir, Transient kind) {
  if (kind == Transient::kTemp) return sweepAtomicTemps(dir);
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->path().extension() != ".lock") continue;
    auto h = holdFile(it->path(), HoldMode::kExistingTry);
    if (!h.ok() || h->fd < 0) continue;  // held by a live process, gone, or unreadable
    if (::unlink(it->path().c_str()) == 0) ++removed;
    ::close(h->fd);
  }
  return removed;
}

}  // namespace rdmanet::cni
