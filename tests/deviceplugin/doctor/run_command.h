#pragma once
// Test-only: runs a command line through /bin/sh (popen) and captures its stdout, for the tests
// that drive the rdmanet-doctor and rdmanet-device-plugin binaries. Never used by product code.

#include <string>

namespace rdmanet::doctor::testing {

struct CommandResult {
  int rc = -1;  // exit status; -1 when it could not run or died by a signal
  std::string out;
};

// `stderr_to` is where stderr goes ("/dev/null" by default); "" merges it into `out`.
CommandResult runCommand(const std::string& cmd, const std::string& stderr_to = "/dev/null");

}  // namespace rdmanet::doctor::testing
