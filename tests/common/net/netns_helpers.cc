#include "tests/common/net/netns_helpers.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace rdmanet::testing {

bool isRoot() { return ::geteuid() == 0; }

int run(const std::vector<std::string>& argv, std::string* err) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::dup2(pipefd[1], 2);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (err) *err = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Background::Background(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid < 0) return;
  if (pid == 0) {
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  pid_ = pid;
}

int Background::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool ip(const std::vector<std::string>& args, std::string* err) {
  std::vector<std::string> argv{"/usr/bin/ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, err) == 0;
}

ScratchNetns::ScratchNetns() {
  static std::atomic<int> counter{0};
  name_ = "rdmanet-t-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  ok_ = ip({"netns", "add", name_});
}

ScratchNetns::~ScratchNetns() {
  if (ok_) (void)ip({"netns", "del", name_});
}

EnterNetns::EnterNetns(const std::string& path)
    : saved_(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
  const Fd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ok_ = saved_.get() >= 0 && target.get() >= 0 && ::setns(target.get(), CLONE_NEWNET) == 0;
}

EnterNetns::~EnterNetns() {
  if (saved_.get() < 0) return;
  if (::setns(saved_.get(), CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "test helper: cannot restore netns\n");
    std::abort();
  }
}

unsigned long currentNetnsInode() {
  struct stat st {};
  if (::stat("/proc/thread-self/ns/net", &st) != 0) return 0;
  return st.st_ino;
}

}  // namespace rdmanet::testing
