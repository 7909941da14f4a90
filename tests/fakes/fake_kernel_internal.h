#pragma once
// Internal to tests/fakes: the namespace record shared by fake_kernel.cc and fake_netlink*.cc.

#include <sys/types.h>

#include <map>
#include <vector>

#include "tests/fakes/fake_kernel.h"

namespace rdmanet {

struct FakeKernel::Ns {
  std::string name;
  int memfd = -1;  // identity of the namespace for fds handed out (by inode)
  ino_t ino = 0;
  int next_ifindex = 2;
  std::map<int, FakeLink> links;
  std::vector<Route> routes;
};

// Derived operstate, as the kernel reports it for the common cases.
void refreshOperstate(FakeLink& l);
bool validIfname(const std::string& name);

}  // namespace rdmanet
