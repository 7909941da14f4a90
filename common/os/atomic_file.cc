#include "common/os/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/base/fd.h"
#include "common/os/held_file.h"

namespace rdmanet {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempMarker = ".rdmanet-tmp.";

Error ioError(int err, std::string_view what, const fs::path& p) {
  return errnoError(ErrorCode::kIoFailure, err, fmt::format("{} {}", what, p.string()));
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
  // Waits only for a sweep that looks at a leftover of the same name: each thread has a temp
  // name of its own.
  RDMANET_ASSIGN_OR_RETURN(Hold hold, holdFile(tmp, HoldMode::kCreateWait));
  const Fd fd = std::move(hold.fd);
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

int sweepAtomicTemps(const fs::path& dir) { return sweepUnheld(dir, isAtomicTempName); }

}  // namespace rdmanet
