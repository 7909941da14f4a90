#pragma once
// The real kernel seams the doctor reads through, opened once in the caller's thread and
// network namespace (the host's): rtnetlink for DCB, ethtool generic netlink for global pause,
// libibverbs for RDMA port facts. Shared by `rdmanet-doctor` and `rdmanet-device-plugin doctor`
// and the daemon's periodic run, so each opens them the same way. A seam that cannot be opened
// is left null and its checks say UNKNOWN; a note goes to `err` when one is given.

#include <memory>
#include <ostream>

#include "common/net/netlink.h"
#include "common/net/pause.h"
#include "common/rdma/rdma_verbs.h"
#include "deviceplugin/doctor/pods.h"

namespace rdmanet::doctor {

struct HostSeams {
  std::unique_ptr<Netlink> netlink;
  std::unique_ptr<PauseReader> pause;
  std::unique_ptr<RdmaVerbs> verbs;
};

HostSeams openHostSeams(std::ostream* err);

// `pods`' real readings (podnet's seams in the host's namespaces, notes to `err`) and a real
// sleep between them.
PodsCliDeps hostPodsCliDeps(std::ostream* err);

}  // namespace rdmanet::doctor
