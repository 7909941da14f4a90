#pragma once
// Test harness for the device plugin's integration tests: the real rdmanet-device-plugin and
// rdmanet-fake-kubelet binaries as child processes, a simulated node root, and the fake
// kubelet's JSON-lines events.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/base/fd.h"

namespace rdmanet::dp::testing {

using Json = nlohmann::json;
using namespace std::chrono_literals;

// A child process; stdin and stdout optionally piped, stderr to a file.
class Child {
 public:
  Child(const std::vector<std::string>& argv, bool pipe_io, const std::filesystem::path& err);
  ~Child();  // SIGKILL if still running
  pid_t pid() const { return pid_; }
  void writeLine(const std::string& line);
  void closeStdin();
  // A line from stdout, or nullopt at EOF / timeout.
  std::optional<std::string> readLine(std::chrono::milliseconds timeout);
  void signal(int sig);
  // Exit code, or -1 on timeout / death by signal.
  int wait(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  Fd in_, out_;
  std::string buf_;
  bool exited_ = false;
  int status_ = 0;
};

int64_t nowNs();  // CLOCK_REALTIME, comparable with the fake kubelet's "t_ns"

class FakeKubeletProc {
 public:
  FakeKubeletProc(const std::filesystem::path& kubelet_dir, const std::filesystem::path& work,
                  std::vector<std::string> extra = {});
  // Sends a command line and waits for its "done" event; returns its "ok".
  bool command(const std::string& line, std::chrono::milliseconds timeout = 20s);
  // The first event at or after index `from` matching `pred`; nullopt on timeout.
  std::optional<Json> waitEvent(const std::function<bool(const Json&)>& pred,
                                std::chrono::milliseconds timeout, size_t from = 0);
  // Events seen so far (reads what is pending first).
  const std::vector<Json>& events();
  size_t mark() { return events().size(); }
  Child& child() { return child_; }

 private:
  bool pump(std::chrono::milliseconds timeout);
  Child child_;
  std::vector<Json> events_;
};

class PluginProc {
 public:
  PluginProc(std::vector<std::string> args, const std::filesystem::path& work);
  Child& child() { return child_; }
  std::string log() const;
  // Port from the last "metrics listening on port N" log line (the log is appended to by every
  // plugin started in the work dir: the last is the running one's).
  int metricsPort(std::chrono::milliseconds timeout = 10s);
  bool logContains(const std::string& s, std::chrono::milliseconds timeout = 5s);

 private:
  std::filesystem::path log_path_;
  Child child_;
};

// A TCP connection to 127.0.0.1:port; an invalid Fd when it cannot connect. `rcvbuf` > 0 sets
// SO_RCVBUF before connecting, so the receive window stays that small from the start. Inline, so
// that unit tests use it without the harness's binaries.
inline Fd connectLoopback(int port, int rcvbuf = 0) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (rcvbuf > 0) ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return Fd();
  return fd;
}

// GET http://127.0.0.1:port/path: {status, body}; status -1 if it cannot connect.
std::pair<int, std::string> httpGet(int port, const std::string& path);

std::filesystem::path freshDir(const std::string& tag);
void writeFile(const std::filesystem::path& p, const std::string& text);

// Matchers for events.
std::function<bool(const Json&)> isEvent(const std::string& event,
                                         const std::string& resource = "");
int healthyOf(const Json& devices_event, const std::string& id);  // 1, 0, or -1 if absent

}  // namespace rdmanet::dp::testing
