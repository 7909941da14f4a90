#include "cni/conf/logger.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>

#include "common/os/fd.h"

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

void Logger::setFile(const std::string& path) {
  if (path.empty()) return;
  // O_CLOEXEC: IPAM children must not inherit the log file.
  Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  if (fd.get() < 0) return;
  std::FILE* f = ::fdopen(fd.get(), "a");
  if (f == nullptr) return;
  (void)fd.release();  // the FILE owns it now
  if (file_ != nullptr) std::fclose(file_);
  file_ = f;
}

void Logger::log(LogLevel level, std::string_view msg) {
  if (level < level_ || level_ == LogLevel::kOff) return;
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  std::FILE* out = sink_ != nullptr ? sink_ : (file_ != nullptr ? file_ : stderr);
  // UTC from std::chrono's calendar arithmetic: gmtime_r(3) and strftime(3) load
  // /etc/localtime on first use (6 syscalls per exec) for a zone we never print.
  using namespace std::chrono;
  const auto now = floor<seconds>(system_clock::now());
  const auto day = floor<days>(now);
  const year_month_day ymd{day};
  const hh_mm_ss hms{now - day};
  const std::string line = fmt::format(
      "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z rdmanet {} {} {}\n", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), hms.hours().count(),
      hms.minutes().count(), hms.seconds().count(), kNames[static_cast<int>(level)], prefix_, msg);
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace rdmanet::cni
