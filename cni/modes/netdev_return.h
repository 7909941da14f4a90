#pragma once
// Bringing a physical netdev (SR-IOV VF, host-device) that ADD moved into a pod back to the host
// under its original name, MTU, MAC and admin state. Shared by DEL and by ADD's rollback, so
// both restore the same way; works from any intermediate state ADD may have left.

#include <string>

#include "cni/modes/plugin_deps.h"
#include "cni/state/attachment_state.h"
#include "common/base/result.h"

namespace rdmanet::cni {

// In the pod (when it still exists): find the device by what proves it (device_identity.h),
// delete the VLAN made on it, set it down, rename it to st.host_ifname and move it to the host.
// Then in the host, find it again by proof (a destroyed netns returns a physical device to the
// host under its pod name or "dev<N>") and restore name, MTU, MAC and admin state. A link found
// only by a name is never touched: Ok, with a warning, when the device is not proven anywhere
// (a virtual device that died with its netns, a device a pod swapped for another).
Status returnNetdevToHost(PluginDeps& deps, const AttachmentState& st, const std::string& netns);

}  // namespace rdmanet::cni
