#include "tests/deviceplugin/doctor/run_command.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace rdmanet::doctor::testing {

CommandResult runCommand(const std::string& cmd, const std::string& stderr_to) {
  const std::string full = cmd + (stderr_to.empty() ? " 2>&1" : " 2>" + stderr_to);
  CommandResult r;
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace rdmanet::doctor::testing
