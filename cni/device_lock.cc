#include "cni/device_lock.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <thread>
#include <utility>

#include "cni/held_file.h"

namespace rdmanet::cni {

DeviceLock::DeviceLock(DeviceLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}

DeviceLock& DeviceLock::operator=(DeviceLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
  }
  return *this;
}

DeviceLock::~DeviceLock() { release(); }

void DeviceLock::release() {
  if (fd_ < 0) return;
  // Removed while still held: a waiter that opened this inode finds it unlinked once it gets
  // the flock, and opens the path afresh (holdFile).
  (void)::unlink(path_.c_str());
  ::close(fd_);  // closing the fd drops the flock
  fd_ = -1;
}

Result<DeviceLock> DeviceLock::acquire(const std::filesystem::path& path,
                                       std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto h = holdFile(path, HoldMode::kCreateTry);
    if (!h.ok()) return h.error().context("device lock");
    if (h->fd >= 0) return DeviceLock(h->fd, path);
    if (std::chrono::steady_clock::now() >= deadline) {
      return makeError(
          ErrorCode::kTryAgainLater,
          fmt::format("device busy: {} is held by another CNI operation", path.filename().string()),
          fmt::format("waited {} ms; try again later", timeout.count()));
    }
    std::this_thread::sleep_for(pause);
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

}  // namespace rdmanet::cni
