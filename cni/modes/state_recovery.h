#pragma once
// DEL without a state file: the file was lost (a wiped /var/lib, a node restore, a hand
// `rm`) while the pod's network namespace still holds our device. DEL must still give the
// device back, so this rebuilds, from the netconf and from what the pod and the node show,
// the AttachmentState that DEL would have read; the normal release path then restores from it.
//
// What can be known, and what cannot:
// - The device is identified in the pod by the kernel's own word: the link whose parent device
//   (IFLA_PARENT_DEV_NAME) is the netconf's deviceID, under whatever name (CNI_IFNAME, the
//   lower of a host-device VLAN, or the name a half-done earlier DEL gave it). A link the
//   kernel does not tie to that PCI function is never touched (a veth standing in for a VF on
//   the simulated node included). host-device by name accepts the physical link (no kind)
//   named CNI_IFNAME or `device`, or under a VLAN named CNI_IFNAME, while no link of that name
//   is in the host.
// - The original host name, MTU, MAC and VF settings are gone with the file. The device comes
//   back under the name sysfs still gives it, else the netconf's `device`, else the name
//   systemd's path scheme would give it (`<pf>v<N>` for a VF, `enp<bus>s<slot>f<fn>` for a
//   function), else `rdmanet<bus><devfn>`; the first that is free in the host wins. VF knobs
//   that differ from the kernel's defaults (no admin MAC, no VLAN/QoS, no rate limits, spoofchk
//   on, trust off, link state auto) are reset to them, through the PF, before the move. The
//   device comes back down; its MTU is left as the pod had it.
// - RDMA devices bound to it in the pod (exclusive RDMA netns mode) go back with it.
// - macvlan needs no device: the macvlan named CNI_IFNAME in the pod is deleted and the
//   attachment's use of the shared host VLAN device is released (both idempotent).
// - With the netns gone as well nothing is rebuilt for a VF or host-device: the kernel returned
//   the device to the host, and a device restored by an earlier DEL cannot be told apart from
//   one left with the pod's settings, so its knobs are not touched.

#include <optional>

#include "cni/conf/env.h"
#include "cni/conf/netconf.h"
#include "cni/modes/plugin_deps.h"
#include "cni/state/attachment_state.h"
#include "common/base/result.h"

namespace rdmanet::cni {

// The rebuilt state, or nullopt when nothing of this attachment is found (ADD never ran, or
// DEL already did). Errors are the kernel's (the pod's netns could not be read, ...).
Result<std::optional<AttachmentState>> recoverState(PluginDeps& deps, const CniEnv& env,
                                                    const NetConf& conf);

}  // namespace rdmanet::cni
