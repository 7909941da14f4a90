#include "tests/deviceplugin/integration/harness.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/fakes/eventually.h"

namespace rdmanet::dp::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Child::Child(const std::vector<std::string>& argv, bool pipe_io, const fs::path& err) {
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (pipe_io && (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)) {
    throw std::runtime_error("pipe");
  }
  int errfd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_ = ::fork();
  if (pid_ == 0) {
    if (pipe_io) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
    } else {
      int devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, 0);
      ::dup2(errfd, 1);
    }
    ::dup2(errfd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(errfd);
  if (pipe_io) {
    ::close(in[0]);
    ::close(out[1]);
    in_ = Fd(in[1]);
    out_ = Fd(out[0]);
  }
}

Child::~Child() {
  if (running()) {
    signal(SIGKILL);
    wait(5s);
  }
}

void Child::writeLine(const std::string& line) {
  std::string s = line + "\n";
  (void)!::write(in_.get(), s.data(), s.size());
}

void Child::closeStdin() { in_ = Fd(); }

std::optional<std::string> Child::readLine(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto nl = buf_.find('\n'); nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    char tmp[65536];
    ssize_t n = ::read(out_.get(), tmp, sizeof(tmp));
    if (n <= 0) return std::nullopt;
    buf_.append(tmp, static_cast<size_t>(n));
  }
}

void Child::signal(int sig) {
  if (pid_ > 0 && !exited_) ::kill(pid_, sig);
}

int Child::wait(std::chrono::milliseconds timeout) {
  if (!exited_) {
    exited_ = rdmanet::testing::eventually(  // polling the child
        [&] { return ::waitpid(pid_, &status_, WNOHANG) == pid_; }, timeout, 10ms);
    if (!exited_) return -1;
  }
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

bool Child::running() {
  if (exited_ || pid_ <= 0) return false;
  if (::waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
  return !exited_;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

FakeKubeletProc::FakeKubeletProc(const fs::path& kubelet_dir, const fs::path& work,
                                 std::vector<std::string> extra)
    : child_(
          [&] {
            std::vector<std::string> argv = {RDMANET_FAKE_KUBELET_BIN, "--kubelet-dir",
                                             kubelet_dir.string(), "--log",
                                             (work / "kubelet.log").string()};
            argv.insert(argv.end(), extra.begin(), extra.end());
            return argv;
          }(),
          true, work / "kubelet.stderr") {}

bool FakeKubeletProc::pump(std::chrono::milliseconds timeout) {
  auto line = child_.readLine(timeout);
  if (!line) return false;
  try {
    events_.push_back(Json::parse(*line));
  } catch (const std::exception&) {
    events_.push_back({{"event", "garbage"}, {"line", *line}});
  }
  return true;
}

const std::vector<Json>& FakeKubeletProc::events() {
  while (pump(0ms)) {
  }
  return events_;
}

std::optional<Json> FakeKubeletProc::waitEvent(const std::function<bool(const Json&)>& pred,
                                               std::chrono::milliseconds timeout, size_t from) {
  auto deadline = Clock::now() + timeout;
  size_t i = from;
  while (true) {
    for (; i < events_.size(); ++i) {
      if (pred(events_[i])) return events_[i];
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !pump(left)) return std::nullopt;
  }
}

bool FakeKubeletProc::command(const std::string& line, std::chrono::milliseconds timeout) {
  size_t from = events().size();
  std::string cmd = line.substr(0, line.find(' '));
  child_.writeLine(line);
  auto done = waitEvent(
      [&](const Json& e) { return e.value("event", "") == "done" && e.value("cmd", "") == cmd; },
      timeout, from);
  return done && done->value("ok", false);
}

PluginProc::PluginProc(std::vector<std::string> args, const fs::path& work)
    : log_path_(work / "plugin.log"),
      child_(
          [&] {
            args.insert(args.begin(), RDMANET_DP_BIN);
            return args;
          }(),
          false, work / "plugin.log") {}

std::string PluginProc::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool PluginProc::logContains(const std::string& s, std::chrono::milliseconds timeout) {
  return rdmanet::testing::eventually([&] { return log().find(s) != std::string::npos; }, timeout,
                                      20ms);
}

int PluginProc::metricsPort(std::chrono::milliseconds timeout) {
  static const std::regex re("metrics listening on port ([0-9]+)");
  int port = -1;
  (void)rdmanet::testing::eventually(
      [&] {
        // The last such line: a plugin restarted in the same work dir appends to its log.
        const std::string l = log();
        for (auto it = std::sregex_iterator(l.begin(), l.end(), re); it != std::sregex_iterator();
             ++it) {
          port = std::stoi((*it)[1]);
        }
        return port >= 0;
      },
      timeout, 20ms);
  return port;
}

std::pair<int, std::string> httpGet(int port, const std::string& path) {
  const Fd fd = connectLoopback(port);
  if (fd.get() < 0) return {-1, ""};
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  (void)!::write(fd.get(), req.data(), req.size());
  std::string resp;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd.get(), buf, sizeof(buf))) > 0) resp.append(buf, static_cast<size_t>(n));
  int status = -1;
  if (resp.starts_with("HTTP/1.1 ")) status = std::stoi(resp.substr(9, 3));
  auto body = resp.find("\r\n\r\n");
  return {status, body == std::string::npos ? "" : resp.substr(body + 4)};
}

fs::path freshDir(const std::string& tag) {
  std::error_code ec;
  fs::path base =
      fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  // Short: unix socket paths below it must stay under 108 bytes.
  (void)tag;
  std::string tmpl = (base / "dpit-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
  return tmpl;
}

void writeFile(const fs::path& p, const std::string& text) {
  // Write-then-rename, as a ConfigMap update or an editor would.
  fs::path tmp = p.string() + ".tmp";
  std::ofstream(tmp) << text;
  fs::rename(tmp, p);
}

std::function<bool(const Json&)> isEvent(const std::string& event, const std::string& resource) {
  return [event, resource](const Json& e) {
    return e.value("event", "") == event &&
           (resource.empty() || e.value("resource", "") == resource);
  };
}

int healthyOf(const Json& ev, const std::string& id) {
  for (const auto& d : ev.value("devices", Json::array())) {
    if (d.value("id", "") == id) return d.value("health", "") == "Healthy" ? 1 : 0;
  }
  return -1;
}

}  // namespace rdmanet::dp::testing
