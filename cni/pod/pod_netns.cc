#include "cni/pod/pod_netns.h"

#include <fmt/format.h>
#include <sys/stat.h>

namespace rdmanet::cni {

std::string sameNetnsAs(const std::string& netns, const std::vector<std::string>& hosts) {
  struct stat pod {};
  if (netns.empty() || ::stat(netns.c_str(), &pod) != 0) return "";
  for (const std::string& h : hosts) {
    struct stat host {};
    // /proc/1/ns/net needs CAP_SYS_PTRACE over init; without it only the others are compared.
    if (::stat(h.c_str(), &host) != 0) continue;
    if (pod.st_dev == host.st_dev && pod.st_ino == host.st_ino) return h;
  }
  return "";
}

Status refuseHostNetns(const std::string& netns, const std::vector<std::string>& hosts) {
  const std::string same = sameNetnsAs(netns, hosts);
  if (same.empty()) return okStatus();
  return makeError(ErrorCode::kInvalidEnv,
                   fmt::format("CNI_NETNS {} is not a pod network namespace: it is the host's "
                               "({})",
                               netns, same),
                   "the pod's interface would be configured in the host namespace");
}

}  // namespace rdmanet::cni
