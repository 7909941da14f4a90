#pragma once
// Bringing a physical netdev (SR-IOV VF, host-device) that ADD moved into a pod back to the host
// under its original name, MTU, MAC and admin state. Shared by DEL and by ADD's rollback, so
// both restore the same way; works from any intermediate state ADD may have left.

#include <string>

#include "cni/modes/plugin_deps.h"
#include "cni/state/attachment_state.h"
#include "common/base/result.h"

namespace rdmanet::cni {

// In the pod (when it still exists): delete the VLAN made on the device, set it down, rename it
// to st.host_ifname and move it to the host. Then in the host, find it (by name, by the name it
// had in the pod, by its PCI function's netdev, or by ifindex, since a destroyed netns returns
// physical devices to the host under their pod name or "dev<N>") and restore name, MTU, MAC and
// admin state. Ok when the device cannot be found at all (a virtual test device that died with
// the netns).
Status returnNetdevToHost(PluginDeps& deps, const AttachmentState& st, const std::string& netns);

}  // namespace rdmanet::cni
