#include "cni/device_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <thread>
#include <utility>

namespace rdmanet::cni {

DeviceLock::DeviceLock(DeviceLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}

DeviceLock& DeviceLock::operator=(DeviceLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

DeviceLock::~DeviceLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the fd drops the flock
}

Result<DeviceLock> DeviceLock::acquire(const std::filesystem::path& path,
                                       std::chrono::milliseconds timeout) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "cannot open lock " + path.string());
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return DeviceLock(fd);
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int e = errno;
      ::close(fd);
      return errnoError(ErrorCode::kIoFailure, e, "cannot lock " + path.string());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
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
