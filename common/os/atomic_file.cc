#include "common/os/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/os/fd.h"

namespace rdmanet {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempMarker = ".rdmanet-tmp.";
// Attempts to hold the temp path when it keeps being replaced between our open and our flock
// (only a sweep does that: each thread has a temp name of its own).
constexpr int kHoldAttempts = 16;

Error ioError(int err, std::string_view what, const fs::path& p) {
  return errnoError(ErrorCode::kIoFailure, err, fmt::format("{} {}", what, p.string()));
}

bool sameInode(int fd, const fs::path& p) {
  struct stat held {
  }, named{};
  return ::fstat(fd, &held) == 0 && ::lstat(p.c_str(), &named) == 0 &&
         held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

// Opens (creating) `tmp` and takes its flock (waiting only for a sweep that looks at a leftover
// of the same name). A symlink or other non-regular file planted there is removed, not followed.
Result<Fd> holdTemp(const fs::path& tmp) {
  for (int attempt = 0; attempt < kHoldAttempts; ++attempt) {
    Fd fd(::open(tmp.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600));
    if (fd.get() < 0) {
      if (errno == ELOOP || errno == ENXIO) {  // a symlink, or a FIFO/socket
        (void)::unlink(tmp.c_str());
        continue;
      }
      return ioError(errno, "cannot create", tmp);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return ioError(errno, "cannot stat", tmp);
    if (!S_ISREG(st.st_mode)) {
      (void)::unlink(tmp.c_str());
      continue;
    }
    int rc;
    do {
      rc = ::flock(fd.get(), LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return ioError(errno, "cannot lock", tmp);
    // A sweep may have removed the path between our open and our flock: then we hold an
    // orphan and start again.
    if (sameInode(fd.get(), tmp)) return fd;
  }
  return makeError(ErrorCode::kIoFailure,
                   fmt::format("{} keeps being replaced while it is opened", tmp.string()));
}

Status fillFrom(std::string_view content, int fd, const fs::path& tmp) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ioError(errno, "cannot write", tmp);
    content.remove_prefix(static_cast<size_t>(n));
  }
  return okStatus();
}

}  // namespace

fs::path atomicTempPath(const fs::path& path) {
  return fs::path(fmt::format("{}{}{}", path.string(), kTempMarker, ::gettid()));
}

bool isAtomicTempName(std::string_view filename) {
  const auto at = filename.rfind(kTempMarker);
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view pid = filename.substr(at + kTempMarker.size());
  return !pid.empty() && pid.find_first_not_of("0123456789") == std::string_view::npos;
}

Status writeFileAtomicWith(const fs::path& path, const AtomicFill& fill,
                           const AtomicWriteOptions& options) {
  const fs::path tmp = atomicTempPath(path);
  RDMANET_ASSIGN_OR_RETURN(Fd fd, holdTemp(tmp));
  // Unlinked while still held, so a sweep never sees it unheld.
  auto fail = [&](Error e) -> Status {
    (void)::unlink(tmp.c_str());
    return e;
  };
  // A leftover of a dead thread that had our id (id reuse, another PID namespace) is ours now;
  // start it empty.
  if (::ftruncate(fd.get(), 0) != 0) return fail(ioError(errno, "cannot truncate", tmp));
  if (auto st = fill(fd.get(), tmp); !st.ok()) return fail(st.error());
  if (::fchmod(fd.get(), options.mode) != 0) return fail(ioError(errno, "cannot chmod", tmp));
  if (options.durable && ::fsync(fd.get()) != 0) return fail(ioError(errno, "cannot fsync", tmp));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return fail(errnoError(ErrorCode::kIoFailure, errno,
                           fmt::format("cannot rename {} to {}", tmp.string(), path.string())));
  }
  if (options.durable) {
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (d.get() < 0 || ::fsync(d.get()) != 0) return ioError(errno, "cannot fsync", dir);
  }
  return okStatus();
}

Status writeFileAtomic(const fs::path& path, std::string_view content,
                       const AtomicWriteOptions& options) {
  return writeFileAtomicWith(
      path, [content](int fd, const fs::path& tmp) { return fillFrom(content, fd, tmp); }, options);
}

int sweepAtomicTemps(const fs::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!isAtomicTempName(it->path().filename().string())) continue;
    Fd fd(::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (fd.get() < 0) continue;                               // gone, or not ours to open
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // a live writer holds it
    // Still the file we locked (its writer may have renamed it away in between)?
    if (sameInode(fd.get(), it->path()) && ::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace rdmanet
