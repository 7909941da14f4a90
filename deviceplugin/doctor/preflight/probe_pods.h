#pragma once
// The pre-flight's probe pods: their manifests and what their status says. Pure functions.
//
// Labels: app.kubernetes.io/name=rdmanet-preflight, rdmanet.io/preflight-run=<run id>,
// rdmanet.io/preflight-role=server|client. Node names go in annotations
// (rdmanet.io/preflight-node, rdmanet.io/preflight-peer): a node name may be longer than a label
// value's 63 characters. A pod is pinned by nodeSelector kubernetes.io/hostname, not
// spec.nodeName, because a DRA claim is allocated by the scheduler.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deviceplugin/doctor/preflight/options.h"

namespace rdmanet::doctor::preflight {

inline constexpr std::string_view kAppLabel = "app.kubernetes.io/name";
inline constexpr std::string_view kAppName = "rdmanet-preflight";
inline constexpr std::string_view kRunLabel = "rdmanet.io/preflight-run";
inline constexpr std::string_view kRoleLabel = "rdmanet.io/preflight-role";
inline constexpr std::string_view kNodeAnnotation = "rdmanet.io/preflight-node";
inline constexpr std::string_view kPeerAnnotation = "rdmanet.io/preflight-peer";
inline constexpr std::string_view kNetworksAnnotation = "k8s.v1.cni.cncf.io/networks";
inline constexpr std::string_view kNetworkStatusAnnotation = "k8s.v1.cni.cncf.io/network-status";

enum class Role { kServer, kClient };

struct ProbePod {
  Role role = Role::kServer;
  std::string name{};
  std::string node{};
  std::string peer_node{};  // a client's server node
  NadRef nad{};
  std::vector<std::string> command{};
};

// "rdmanet-preflight-<run>-server-<i>" / "...-client-<i>".
std::string probePodName(const std::string& run_id, Role role, size_t index);
// The probe command + "--listen --exchange tcp --wait-device 120".
std::vector<std::string> serverCommand(const PreflightOptions& o);
// The probe command + "<ip> --exchange tcp --wait-device 120 --bandwidth --count N --mtu-sweep
// --dscp D --priority P --summary-file /dev/termination-log".
std::vector<std::string> clientCommand(const PreflightOptions& o, const std::string& server_ip);
// The Pod object to POST to /api/v1/namespaces/<o.ns>/pods.
nlohmann::json probePodManifest(const PreflightOptions& o, const std::string& run_id,
                                const ProbePod& pod);

// Where a pod is, read from its status.
struct PodProgress {
  std::string phase{};      // Pending, Running, Succeeded, Failed, Unknown ("" before any status)
  bool terminated = false;  // the container ran and ended
  int exit_code = 0;        // when terminated
  std::string message{};    // the termination message (the probe's summary)
  std::string reason{};     // terminated or waiting reason (Error, ErrImagePull, ...)
  std::string detail{};     // the waiting message, or the PodScheduled=False message
  // "Pending (Unschedulable: 0/2 nodes are available: ...)", for a FAIL's evidence.
  std::string describe() const;
};
PodProgress podProgress(const nlohmann::json& pod);

// The pod's eth1 IPv4 address from Multus' network-status annotation (a JSON list of {name,
// interface, ips, ...}); nullopt while it is not there (or names no IPv4 for eth1).
std::optional<std::string> eth1Ipv4(const nlohmann::json& pod);

}  // namespace rdmanet::doctor::preflight
