#pragma once
// Runs a program (no shell) and captures its output. The simnode tool uses it for `ip`: it is a
// test fixture that sets up veths and namespaces on a developer machine, not product code.

#include <string>
#include <vector>

namespace rdmanet::sim {

struct CommandResult {
  int rc = -1;      // exit status, or -1 if the program could not be started / was killed
  std::string out;  // stdout and stderr, interleaved
};

// argv[0] is looked up in PATH (execvp).
CommandResult runCommand(const std::vector<std::string>& argv);

}  // namespace rdmanet::sim
