#pragma once
// DeviceLock: an exclusive flock on <state dir>/locks/<name>.lock, held for one CNI operation.
//
// A device busy past the deadline is error 11 ("try again later"): kubelet retries, where a
// blocking lock would stall pod start-up for a minute. The lock is released when the object is
// destroyed or the process dies (the kernel drops flocks with the fd), so a crashed plugin
// never wedges a device. The file is a held file (common/os/held_file.h): the holder removes it
// on release, and a file left by a crashed holder is swept, so lock files do not pile up.

#include <chrono>
#include <filesystem>
#include <string>

#include "common/base/clock.h"
#include "common/base/fd.h"
#include "common/base/result.h"

namespace rdmanet::cni {

class DeviceLock {
 public:
  DeviceLock() = default;
  DeviceLock(DeviceLock&& o) noexcept = default;
  DeviceLock& operator=(DeviceLock&& o) noexcept;
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;
  ~DeviceLock();

  // Polls for the lock until `timeout` on `clock` (a flock has no wait with a time-out). Error 11
  // on timeout, 5 if the file cannot be opened.
  static Result<DeviceLock> acquire(const std::filesystem::path& path,
                                    std::chrono::milliseconds timeout, const Clock& clock);
  bool held() const { return fd_.get() >= 0; }

 private:
  DeviceLock(Fd fd, std::filesystem::path path) : fd_(std::move(fd)), path_(std::move(path)) {}
  void release();
  Fd fd_;
  std::filesystem::path path_;
};

// A lock-file name for a device key ("0000:81:10.2", "ens1f0", "ens1f0.100"): characters other
// than [A-Za-z0-9._-] become '_' so the name is a plain file name.
std::string lockName(std::string_view prefix, std::string_view key);
// Whether a file name is a lock file's ("<name>.lock"), for the sweep of the locks directory.
bool isLockFileName(std::string_view filename);

}  // namespace rdmanet::cni
