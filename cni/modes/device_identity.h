#pragma once
// Which link is the device an attachment took: proven by what the kernel ties to the device,
// never by an interface name. A pod with NET_ADMIN names its links as it likes, and the host
// may have a link of any name (a node whose NIC is eth1), so a name proves nothing; DEL acts
// only on a link that one of these proves to be the device:
//
// - The bus device (IFLA_PARENT_DEV_NAME, the PCI function of a VF or NIC), anywhere: it moves
//   with the netdev and no pod can give a link of its own one.
// - The permanent MAC (IFLA_PERM_ADDRESS) of a physical link (no kind): read by the driver from
//   the hardware; no pod can create a physical link or change it. In the pod it must also keep
//   the ifindex the device got there; in the host (where a destroyed netns returns physical
//   devices under their pod name or "dev<N>") the address alone.
// - A virtual device (a veth: the tests and the simulated node move those) has neither. It is
//   proven in the pod's netns by its ifindex there and its kind; in the host only as the link
//   DEL has just moved out of the pod (its name, kind and MAC), or as one that never left (an
//   ADD that stopped before the move: its name, kind and the ifindex ADD found it at). Residual
//   risk, accepted because production devices are physical: a pod with NET_ADMIN can delete the
//   veth and create a link of the same kind at the same ifindex (RTM_NEWLINK takes an ifindex),
//   which DEL then moves to the host, down, under the device's old name; a veth's peer would then
//   reach the host's netns. A virtual device that died with its netns is never looked for in the
//   host.
// - State files of older CNIs record none of this: their PCI address proves what it can (the
//   bus device); without one, only a physical link named as ADD left it, in the pod.

#include <optional>

#include "cni/modes/plugin_deps.h"
#include "cni/state/attachment_state.h"
#include "common/base/result.h"
#include "common/net/netlink.h"

namespace rdmanet::cni {

// Records `dev` (the device as ADD found it in the host) in st.dev_*; its ifindex is where a
// move into the pod keeps it when free (setPodIfindex corrects it after the move).
void recordIdentity(AttachmentState& st, const LinkInfo& dev);

enum class Side { kPod, kHost };
// Whether `l` is proven to be the attachment's device, on that side.
bool provesDevice(const AttachmentState& st, const LinkInfo& l, Side side);

// The device in the pod (`nl` is the pod's), if there and proven.
Result<std::optional<LinkInfo>> provenInPod(Netlink& nl, const AttachmentState& st);

// The device in the host, if there and proven. `moved`: the device as DEL saw it in the pod
// just before moving it out under st.host_ifname (the only way a virtual device is found here).
Result<std::optional<LinkInfo>> provenInHost(PluginDeps& deps, const AttachmentState& st,
                                             const std::optional<LinkInfo>& moved);

}  // namespace rdmanet::cni
