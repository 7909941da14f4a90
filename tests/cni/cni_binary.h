#pragma once
// Running the real `rdmanet` binary from tests (netns, stress), plus shell-level test helpers.
// Tests may use ip(8) and ping to build and probe the world; the plugin itself never runs a
// shell.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "cni/conf/json_util.h"
#include "cni/ipam/ipam.h"

namespace rdmanet::cni::testing {

inline std::string binaryDir() {
  const std::string bin = RDMANET_CNI_BINARY;
  return bin.substr(0, bin.rfind('/'));
}

struct BinaryRun {
  int exit_code = 0;
  std::string out;
  json doc;  // parsed stdout (null when empty)
};

// Runs rdmanet with CNI_* from `env` (plus CNI_PATH=<binary dir>:/usr/lib/cni unless `env` has
// one) and the given RDMANET_STATE_DIR. A run past 30 s is killed and fails (a hang is a bug).
inline BinaryRun runRdmanet(const std::string& command, const std::string& conf,
                            std::map<std::string, std::string> env, const std::string& state_dir) {
  const SteadyClock clock;  // the binary runs in real time
  ExecIpam exec(clock, std::chrono::seconds(30));
  ExecRequest req;
  req.type = "rdmanet";
  req.path = {binaryDir(), "/usr/lib/cni"};  // where the rdmanet binary itself is found
  env["CNI_COMMAND"] = command;
  if (!env.count("CNI_PATH")) env["CNI_PATH"] = binaryDir() + ":/usr/lib/cni";
  env["RDMANET_STATE_DIR"] = state_dir;
  req.env = env;
  req.stdin_data = conf;
  auto r = exec.exec(req);
  BinaryRun out;
  if (!r.ok()) {
    out.exit_code = -1;
    out.out = r.error().msg;
    return out;
  }
  out.exit_code = r->exit_code;
  out.out = r->stdout_data;
  auto j = parseJson(out.out);
  if (j.ok()) out.doc = *j;
  return out;
}

inline int sh(const std::string& cmd) {
  const int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

inline std::string shOut(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

}  // namespace rdmanet::cni::testing
