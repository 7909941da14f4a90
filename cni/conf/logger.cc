#include "cni/conf/logger.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/base/clock.h"
#include "common/base/fd.h"
#include "common/os/confined_path.h"

namespace rdmanet::cni {

LogLevel parseLogLevel(std::string_view s) {
  if (s == "debug" || s == "verbose" || s == "trace") return LogLevel::kDebug;
  if (s == "warning" || s == "warn") return LogLevel::kWarn;
  if (s == "error" || s == "panic") return LogLevel::kError;
  if (s == "off" || s == "none") return LogLevel::kOff;
  return LogLevel::kInfo;
}

Logger::~Logger() {
  if (file_ != nullptr) std::fclose(file_);
}

void Logger::setContext(std::string container_id, std::string netns, std::string ifname) {
  prefix_ = fmt::format("containerID={} netns={} ifname={}", container_id, netns, ifname);
}

Status Logger::setFile(const std::string& root, const std::string& path, size_t max_bytes) {
  if (path.empty()) return okStatus();
  RDMANET_ASSIGN_OR_RETURN(ConfinedFile where, resolveConfinedFile(root, path, false));
  // O_CLOEXEC (added there): IPAM children must not inherit the log file.
  RDMANET_ASSIGN_OR_RETURN(
      Fd fd, openRegularAt(where.dir.get(), where.name, O_WRONLY | O_APPEND | O_CREAT, 0600,
                           "logFile " + path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errnoError(ErrorCode::kIoFailure, errno, "stat " + path);
  size_t size = static_cast<size_t>(st.st_size);
  if (size >= max_bytes) {
    // Capped: start again rather than grow without bound (every ADD and DEL appends).
    if (::ftruncate(fd.get(), 0) != 0) return errnoError(ErrorCode::kIoFailure, errno, path);
    size = 0;
  }
  // Back to blocking writes: a regular file never blocks anyway, and a partial write must not
  // drop the tail of a line.
  (void)::fcntl(fd.get(), F_SETFL, O_APPEND);
  std::FILE* f = ::fdopen(fd.get(), "a");
  if (f == nullptr) return errnoError(ErrorCode::kIoFailure, errno, "fdopen " + path);
  (void)fd.release();  // the FILE owns it now
  if (file_ != nullptr) std::fclose(file_);
  file_ = f;
  // Concurrent invocations append too: each stays within the cap from where it found the file.
  file_room_ = 2 * max_bytes - size;
  return okStatus();
}

void Logger::log(LogLevel level, std::string_view msg) {
  if (level < level_ || level_ == LogLevel::kOff) return;
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  std::FILE* out = sink_ != nullptr ? sink_ : (file_ != nullptr ? file_ : stderr);
  // UTC from std::chrono's calendar arithmetic: gmtime_r(3) and strftime(3) load
  // /etc/localtime on first use (6 syscalls per exec) for a zone we never print.
  using namespace std::chrono;
  const auto now = floor<seconds>(wallNow());
  const auto day = floor<days>(now);
  const year_month_day ymd{day};
  const hh_mm_ss hms{now - day};
  const std::string line = fmt::format(
      "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z rdmanet {} {} {}\n", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), hms.hours().count(),
      hms.minutes().count(), hms.seconds().count(), kNames[static_cast<int>(level)], prefix_, msg);
  if (out == file_ && sink_ == nullptr) {
    if (line.size() > file_room_) return;  // the file is at its cap
    file_room_ -= line.size();
  }
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace rdmanet::cni
