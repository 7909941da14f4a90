#pragma once
// The two steps between a NodePrepareResources answer and a running container, done as the real
// peers do them, so tests can assert what a container finally sees:
// - kubelet (pkg/kubelet/cm/dra, cdiDevicesAsList): a container that references `request` of a
//   claim gets the CDI device IDs of every returned device whose request_names contain it (all
//   devices when it names no request, or when a device names none), in answer order;
// - the runtime (CDI's Cache.InjectDevices + ContainerEdits.Apply): each ID is resolved through
//   the spec files of the CDI directory (kind + device name) and the edits are applied in order:
//   an env variable set again is replaced by name, a device node by path. A mount whose host
//   path does not exist is what runc's bind mount fails the container on (containerd creates a
//   missing source only for the CRI's own mounts): listed, so tests can assert there is none.

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "proto/kubelet/dra/v1/api.pb.h"

namespace rdmanet::dp::testing {

std::vector<std::string> containerCdiIds(
    const k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourceResponse& claim,
    const std::string& request);

struct ContainerView {
  std::map<std::string, std::string> env{};
  std::set<std::string> device_nodes{};              // host paths
  std::set<std::string> mounts{};                    // container paths
  std::vector<std::string> unresolved{};             // IDs no spec file defines
  std::vector<std::string> missing_mount_sources{};  // host paths that do not exist
};

ContainerView applyCdi(const std::filesystem::path& cdi_dir, const std::vector<std::string>& ids);

}  // namespace rdmanet::dp::testing
