#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "cni/conf/limits.h"
#include "cni/conf/netconf.h"
#include "cni/ipam/ipam.h"
#include "common/base/deadline.h"
#include "common/base/fd.h"

extern char** environ;

namespace rdmanet::cni {
namespace {

struct Pipe {
  Fd read{};
  Fd write{};
};

Result<Pipe> openPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errnoError(ErrorCode::kInternal, errno, "pipe");
  return Pipe{.read = Fd(fds[0]), .write = Fd(fds[1])};
}

// Builds the child's environment: ours without any CNI_* variable, plus the non-empty
// overrides. An empty CNI_NETNS or CNI_CONTAINERID is left out rather than passed empty, which
// is how GC and STATUS arrive (a delegate must not mistake "" for a value).
std::vector<std::string> childEnv(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const std::string key(kv.substr(0, kv.find('=')));
    if (!overrides.count(key) && key.rfind("CNI_", 0) != 0) out.emplace_back(kv);
  }
  for (const auto& [k, v] : overrides) {
    if (!v.empty()) out.push_back(fmt::format("{}={}", k, v));
  }
  return out;
}

}  // namespace

std::optional<std::string> findInPath(const std::string& type,
                                      const std::vector<std::string>& path) {
  if (!isPlainFileName(type)) return std::nullopt;
  for (const auto& dir : path) {
    if (dir.empty() || dir.front() != '/') continue;  // relative CNI_PATH entries are ignored
    std::string candidate = fmt::format("{}/{}", dir, type);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

Result<ExecOutput> ExecIpam::exec(const ExecRequest& req) {
  const auto bin = findInPath(req.type, req.path);
  if (!bin) {
    return makeError(ErrorCode::kDeviceNotFound,
                     fmt::format("failed to find plugin \"{}\" in path [{}]", req.type,
                                 fmt::join(req.path, " ")));
  }
  const std::vector<std::string> env = childEnv(req.env);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  char* argv[] = {const_cast<char*>(bin->c_str()), nullptr};

  RDMANET_ASSIGN_OR_RETURN(Pipe in, openPipe());
  RDMANET_ASSIGN_OR_RETURN(Pipe out, openPipe());
  const pid_t pid = ::fork();
  if (pid < 0) return errnoError(ErrorCode::kInternal, errno, "fork");
  if (pid == 0) {
    // Child: only async-signal-safe calls until execve. A process group of its own, so that a
    // timeout kills what it started too.
    (void)::setpgid(0, 0);
    ::dup2(in.read.get(), 0);
    ::dup2(out.write.get(), 1);
    ::execve(argv[0], argv, envp.data());
    ::_exit(127);
  }
  in.read = Fd();
  out.write = Fd();
  // Our pipe ends never block: poll() only promises room for one byte, and a blocking write of
  // a large config would wait for a delegate that is itself blocked writing its stdout.
  ::fcntl(in.write.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(out.read.get(), F_SETFL, O_NONBLOCK);
  // A delegate that exits without reading stdin must not kill us with SIGPIPE.
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);

  // Set here too: the child may not have run its setpgid yet when we kill the group.
  (void)::setpgid(pid, pid);
  const Deadline deadline = Deadline::in(timeout_, clock_);
  bool expired = false;

  ExecOutput result;
  size_t written = 0;
  const std::string& data = req.stdin_data;
  if (data.empty()) in.write = Fd();
  // Interleave writing stdin and reading stdout so neither side can block on a full pipe.
  while (out.read.get() >= 0) {
    pollfd fds[2];
    int n = 0;
    fds[n++] = {out.read.get(), POLLIN, 0};
    if (in.write.get() >= 0) fds[n++] = {in.write.get(), POLLOUT, 0};
    const auto left = deadline.left(timeout_, clock_);
    if (left.count() <= 0) {
      expired = true;
      break;
    }
    const int ready = ::poll(fds, n, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) continue;  // the deadline is checked above
    if (n == 2 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = ::write(in.write.get(), data.data() + written, data.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EINTR && errno != EAGAIN) written = data.size();
      if (written >= data.size()) in.write = Fd();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[8192];
      const ssize_t r = ::read(out.read.get(), buf, sizeof(buf));
      if (r > 0) {
        // One byte past the limit is enough for the parser to refuse it by name.
        if (result.stdout_data.size() <= kMaxDelegateOutputBytes) {
          result.stdout_data.append(buf, static_cast<size_t>(r));
        }
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        out.read = Fd();
      }
    }
  }
  in.write = Fd();
  // The delegate closed its stdout; it still has until the deadline to exit. A pidfd becomes
  // readable when it does (Linux 5.3; without one, the wait below blocks as it always did).
  if (!expired) {
    Fd exited(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    while (exited.get() >= 0) {
      const auto left = deadline.left(timeout_, clock_);
      if (left.count() <= 0) {
        expired = true;
        break;
      }
      pollfd pfd{exited.get(), POLLIN, 0};
      const int ready =
          ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
      if (ready > 0 || (ready < 0 && errno != EINTR)) break;
    }
  }
  int status = 0;
  if (expired) {
    (void)::kill(-pid, SIGKILL);
    (void)::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::sigaction(SIGPIPE, &old, nullptr);
    return makeError(ErrorCode::kTryAgainLater,
                     fmt::format("IPAM delegate {} did not finish within {} ms; killed", *bin,
                                 timeout_.count()));
  }
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGPIPE, &old, nullptr);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    if (result.exit_code == 127 && result.stdout_data.empty()) {
      return makeError(ErrorCode::kInternal, fmt::format("cannot execute {}", *bin));
    }
  } else {
    result.exit_code = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return result;
}

}  // namespace rdmanet::cni
