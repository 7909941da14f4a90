#pragma once
// Attachments as the CNI's ADD records them (cni/state/attachment_state.h), for the podnet tests:
// they are saved with the CNI's own StateStore, so the daemon's reader is tested against the real
// format.

#include <string>

#include "cni/state/attachment_state.h"

namespace rdmanet::podnet::testing {

// A complete attachment "net1" of pod <ns>/<pod>, netns /var/run/netns/<cid>.
inline cni::AttachmentState cniAttachment(const std::string& cid, const std::string& ns,
                                          const std::string& pod, cni::Mode mode) {
  cni::AttachmentState st;
  st.container_id = cid;
  st.ifname = "net1";
  st.netns = "/var/run/netns/" + cid;
  st.pod_namespace = ns;
  st.pod_name = pod;
  st.pod_uid = "uid-" + pod;
  st.mode = mode;
  st.complete = true;
  return st;
}

struct VfSpec {
  std::string pci{}, netdev{}, pf{}, pf_pci{};
  int index = 0;
};

// An sriov attachment of pod ml/<pod> on `vf`, at priority 3.
inline cni::AttachmentState cniSriov(const std::string& cid, const std::string& pod,
                                     const VfSpec& vf) {
  cni::AttachmentState st = cniAttachment(cid, "ml", pod, cni::Mode::kSriov);
  st.pci = vf.pci;
  st.host_ifname = vf.netdev;
  st.pf_name = vf.pf;
  st.pf_pci = vf.pf_pci;
  st.vf_index = vf.index;
  st.priority = 3;
  return st;
}

}  // namespace rdmanet::podnet::testing
