#pragma once
// Logger: the CNI's synchronous line logger (CONTRIBUTING.md, "Logging").
//
// No thread, no buffering beyond one line: the CNI calls setns(2) and forks IPAM plugins, so a
// logger thread or a half-flushed buffer would misbehave. Every line carries the container id,
// netns and ifname. Writes to stderr, or appends to `logFile` from the netconf when it can be
// opened beneath the node's log root (falling back to stderr otherwise): never through a
// symlink, never blocking on a FIFO, a regular file only, and emptied once it reaches its cap.

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet::cni {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };
// "debug", "info", "warning"/"warn", "error", "panic", "off"; unknown -> kInfo.
LogLevel parseLogLevel(std::string_view s);

class Logger {
 public:
  Logger() = default;
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // Identity prefix for every line.
  void setContext(std::string container_id, std::string netns, std::string ifname);
  void setLevel(LogLevel level) { level_ = level; }
  // Appends to `path` from now on, which must be beneath `root` (common/os/confined_path.h): a
  // regular file, created 0600 when missing, emptied first when it holds `max_bytes` or more;
  // lines that would take it past twice that are dropped. On any error (returned: 7 when outside
  // `root`, 5 when a symlink, FIFO or other non-regular file, or unopenable) it stays on stderr.
  Status setFile(const std::string& root, const std::string& path, size_t max_bytes);
  // Sends lines to `f` (tests); nullptr for stderr. Not owned.
  void setSink(std::FILE* f) { sink_ = f; }

  template <typename... Args>
  void debug(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kDebug, fmt::format(f, std::forward<Args>(a)...));
  }
  template <typename... Args>
  void info(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kInfo, fmt::format(f, std::forward<Args>(a)...));
  }
  template <typename... Args>
  void warn(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kWarn, fmt::format(f, std::forward<Args>(a)...));
  }
  template <typename... Args>
  void error(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kError, fmt::format(f, std::forward<Args>(a)...));
  }
  void log(LogLevel level, std::string_view msg);

 private:
  LogLevel level_ = LogLevel::kInfo;
  std::string prefix_;
  std::FILE* file_ = nullptr;  // owned when opened by setFile
  size_t file_room_ = 0;       // bytes file_ may still take
  std::FILE* sink_ = nullptr;  // not owned
};

}  // namespace rdmanet::cni
