#pragma once
// Test-only helpers for netns-labelled tests: throw-away named namespaces (made with
// /usr/bin/ip, the only place a command is executed) and entering one on the test thread.

#include <string>
#include <vector>

#include "common/base/fd.h"

namespace rdmanet::testing {

bool isRoot();

// Runs argv[0] (an absolute path) with argv; returns its exit status (-1 if it could not run).
// Its stderr is returned in *err when given.
int run(const std::vector<std::string>& argv, std::string* err = nullptr);
// `ip <args...>` ; true on exit status 0.
bool ip(const std::vector<std::string>& args, std::string* err = nullptr);

// argv[0] (an absolute path) run in the background, its output to `log`; stop() (or the
// destructor) sends SIGTERM and waits for it: a peer daemon (lldpd) for the test's lifetime.
class Background {
 public:
  Background(const std::vector<std::string>& argv, const std::string& log);
  ~Background() { stop(); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  bool ok() const { return pid_ > 0; }
  // Its exit status after SIGTERM, -1 if it did not exit normally (0 after a clean shutdown).
  int stop();

 private:
  int pid_ = -1;
};

// A named namespace (/run/netns/<name>) removed on destruction.
class ScratchNetns {
 public:
  ScratchNetns();  // name: rdmanet-t-<pid>-<counter>; check ok()
  ~ScratchNetns();
  ScratchNetns(const ScratchNetns&) = delete;
  ScratchNetns& operator=(const ScratchNetns&) = delete;
  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  std::string path() const { return "/run/netns/" + name_; }

 private:
  std::string name_;
  bool ok_ = false;
};

// Moves the calling thread into `path` for its lifetime, then back.
class EnterNetns {
 public:
  explicit EnterNetns(const std::string& path);
  ~EnterNetns();
  EnterNetns(const EnterNetns&) = delete;
  EnterNetns& operator=(const EnterNetns&) = delete;
  bool ok() const { return ok_; }

 private:
  Fd saved_;
  bool ok_ = false;
};

// Inode of the calling thread's network namespace (to compare namespaces).
unsigned long currentNetnsInode();

}  // namespace rdmanet::testing
