#pragma once
// The pod's namespace must be a namespace of its own.
//
// CNI_NETNS names the pod's network namespace by path, and nothing in the spec stops a runtime
// (or a caller with a typo, or an attacker who can run the plugin) from passing the host's: ADD
// would then configure CNI_IFNAME and its address on the host, and DEL would delete the host's
// link of that name. The namespace is identified by its nsfs inode (device and inode number):
// /proc/self/ns/net, /proc/1/ns/net, a bind mount of either, and /proc/<pid>/ns/net of a host
// process are all the same file.

#include <string>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::cni {

// The host namespace among `hosts` (paths such as /proc/self/ns/net) that `netns` is, or ""
// when it is none of them. A path that cannot be stat'ed matches nothing: opening it reports
// why (3 or 4).
std::string sameNetnsAs(const std::string& netns, const std::vector<std::string>& hosts);

// Error 4 naming CNI_NETNS when it is one of `hosts`.
Status refuseHostNetns(const std::string& netns, const std::vector<std::string>& hosts);

}  // namespace rdmanet::cni
