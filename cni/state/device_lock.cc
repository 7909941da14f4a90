#include "cni/state/device_lock.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "common/base/deadline.h"
#include "common/os/held_file.h"

namespace rdmanet::cni {

DeviceLock& DeviceLock::operator=(DeviceLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::move(o.fd_);
    path_ = std::move(o.path_);
  }
  return *this;
}

DeviceLock::~DeviceLock() { release(); }

void DeviceLock::release() {
  if (fd_.get() < 0) return;
  // Removed while still held: a waiter that opened this inode finds it unlinked once it gets
  // the flock, and opens the path afresh (holdFile).
  (void)::unlink(path_.c_str());
  fd_ = Fd();  // closing the fd drops the flock
}

Result<DeviceLock> DeviceLock::acquire(const std::filesystem::path& path,
                                       std::chrono::milliseconds timeout, const Clock& clock) {
  const Deadline deadline = Deadline::in(timeout, clock);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto h = holdFile(path, HoldMode::kCreateTry);
    if (!h.ok()) return h.error().context("device lock");
    if (h->held()) return DeviceLock(std::move(h->fd), path);
    if (deadline.passed(clock)) {
      return makeError(
          ErrorCode::kTryAgainLater,
          fmt::format("device busy: {} is held by another CNI operation", path.filename().string()),
          fmt::format("waited {} ms; try again later", timeout.count()));
    }
    clock.sleepFor(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

std::string lockName(std::string_view prefix, std::string_view key) {
  std::string out(prefix);
  out += '-';
  for (char c : key) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  }
  return out;
}

bool isLockFileName(std::string_view filename) {
  return filename.size() > 5 && filename.ends_with(".lock");
}

}  // namespace rdmanet::cni
