#pragma once
// Device metadata for the container (KEP-5304, k8s.io/dynamic-resource-allocation/api/metadata):
// per claim request, a file the container reads at a path it can build from its pod spec alone,
// naming the devices it got with the attributes the node's ResourceSlice gives them, so that a
// workload (KubeVirt reads resource.kubernetes.io/pciBusID) finds its VF without parsing env.
// What this file computes, without I/O (metadata_files.h writes it):
//
// - The document: a JSON stream of the same DeviceMetadata object once per API version of group
//   metadata.resource.k8s.io, newest first ("v1beta1", then "v1alpha1", which is all a
//   Kubernetes 1.36 consumer knows; the upstream decoder skips versions it does not know and
//   takes the first it does). Each object: kind "DeviceMetadata", apiVersion, metadata {name,
//   namespace, uid, generation: 1} of the claim, podClaimName (a claim made from a template),
//   requests [{name: the result's request ("nic" or "nic/alt"), devices: [{driver, pool, name,
//   attributes}]}], with attributes as a ResourceSlice spells them ({"string": ...}, {"int": ...},
//   {"bool": ...}, {"version": ...}). networkData is left out: the interface a device becomes is
//   known only after the CNI's ADD, which follows prepare (the claim's status.devices carries it,
//   claim_network_sync.h).
// - In the container, read-only: /var/run/kubernetes.io/dra-device-attributes/resourceclaims/
//   <claim name>/<request>/<driver>-metadata.json for a claim the pod names, or .../
//   resourceclaimtemplates/<pod claim name>/<request>/... for one made from a template (its
//   annotation resource.kubernetes.io/pod-claim-name; the claim's own name is generated).
// - On the node: <plugin dir>/dra-device-metadata/<claim UID>/<request>/metadata.json. Upstream's
//   helper keys the directory by "<namespace>_<name>"; rdmanet keys it by the UID, as it does the
//   claim's CDI spec: a claim deleted and made again under its name is another claim, and the
//   unprepare of the old one must not remove the new one's files.
// - The CDI spec that mounts it, one per request as upstream's helper writes them: kind
//   "<driver>/metadata", file "<driver>_metadata_<claim UID>_<request>.json", device
//   "<claim UID>_<request>", ID "<driver>/metadata=<claim UID>_<request>", which prepare adds to
//   the first device it returns for the request (kubelet gives a container the IDs of every device
//   of the requests it references).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/kube/resource_claim.h"
#include "deviceplugin/dra/claim_reader.h"
#include "deviceplugin/dra/kubelet/request_env.h"
#include "deviceplugin/pools/cdi.h"

namespace rdmanet::dp {

inline constexpr std::string_view kMetadataGroup = "metadata.resource.k8s.io";
inline constexpr std::string_view kMetadataKind = "DeviceMetadata";
// Written in this order: newest first.
inline constexpr std::string_view kMetadataVersions[] = {"v1beta1", "v1alpha1"};
inline constexpr std::string_view kMetadataContainerDir =
    "/var/run/kubernetes.io/dra-device-attributes";
inline constexpr std::string_view kPodClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name";
// Under the plugin dir.
inline constexpr std::string_view kMetadataSubdir = "dra-device-metadata";

// The claim a metadata file is about.
struct MetadataClaim {
  std::string driver{};
  std::string pool{};  // the DRA pool of the devices: this node
  ClaimRef ref{};
  // The pod's name for a claim made from its ResourceClaimTemplate; none for a claim it names.
  std::optional<std::string> pod_claim_name{};
};

// One request's file: what goes where, and the CDI device that mounts it.
struct RequestMetadata {
  std::string request{};  // the top-level request: the path's segment
  std::filesystem::path host_file{};
  std::string content{};
  std::filesystem::path cdi_spec{};
  CdiDevice cdi{};
  std::string cdi_id{};
};

// The stream above for one request. `request` is the result's ("nic/alt" for a subrequest);
// `devices` the request's, in answer order.
std::string deviceMetadataStream(const MetadataClaim& claim, std::string_view request,
                                 const std::vector<ResolvedDevice>& devices);

// Everything for one request, its file under `dir` (<plugin dir>/dra-device-metadata) and its
// spec in `cdi_dir`. Error 7 when a name that goes into a path is not a DNS label (the request,
// the pod claim name) or subdomain (the claim name): never from a claim the API server accepted.
Result<RequestMetadata> renderRequestMetadata(const MetadataClaim& claim, std::string_view request,
                                              const std::vector<ResolvedDevice>& devices,
                                              const std::filesystem::path& dir,
                                              const std::filesystem::path& cdi_dir);

// The claim's resource.kubernetes.io/pod-claim-name annotation: kubelet's name for a claim it
// made from a pod's ResourceClaimTemplate (the pod spec's resourceClaims[].name).
std::optional<std::string> podClaimNameOf(const kube::ResourceClaim& claim);

// The in-container path of a request's file, and the names of its CDI spec (file and device).
std::string metadataContainerPath(const MetadataClaim& claim, std::string_view request);
std::string metadataSpecFileName(std::string_view driver, std::string_view claim_uid,
                                 std::string_view request);
std::string metadataCdiKind(std::string_view driver);

}  // namespace rdmanet::dp
