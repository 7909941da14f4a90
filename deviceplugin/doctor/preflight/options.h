#pragma once
// The pre-flight's options (preflight.h documents the command) and their parsing.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::doctor::preflight {

// --pairs: kAuto is every ordered pair up to kAllPairsUpTo nodes, else the ring.
enum class PairMode { kAuto, kRing, kAll };
inline constexpr size_t kAllPairsUpTo = 8;

// A NetworkAttachmentDefinition: "[NS/]NAME" on the command line.
struct NadRef {
  std::string ns{};
  std::string name{};
  std::string text() const { return ns + "/" + name; }
  bool operator==(const NadRef&) const = default;
};

struct PreflightOptions {
  std::string kubeconfig{};  // empty: $KUBECONFIG, else in-cluster
  std::string context{};
  std::vector<std::string> nodes{};  // empty: found by --resource or --claim-template
  std::string resource = "rdma/vf";
  std::string claim_template{};  // DRA mode when set
  std::string driver = "rdma.rdmanet.io";
  PairMode pairs = PairMode::kAuto;
  std::string ns = "rdmanet";
  std::string image{};
  std::string image_pull_policy{};  // empty: the cluster's default
  std::optional<NadRef> network{};
  std::map<std::string, NadRef> node_networks{};
  bool privileged = false;
  std::vector<std::string> probe_command{"rdmanet-device-plugin", "doctor", "probe"};
  int timeout_s = 300;
  int count = 200;
  int dscp = 26;
  int priority = 3;
  std::string daemon_namespace{};  // empty: ns
  int daemon_metrics_port = 9109;
  double bw_percent = 90;
  double rtt_p99_max_us = 1000;
  double rtt_p50_max_us = 0;  // 0: no ceiling on the median
  double rtt_spread_max = 4;
  uint64_t loss_max = 0;  // loss counter events a pair may show
  std::optional<int> mtu{};
  bool no_baseline = false;
  bool keep = false;
  bool json = false;
  bool help = false;
  bool version = false;

  // The NAD a node's probe pod attaches as eth1: its --node-network, else --network; nullopt
  // when neither names one.
  std::optional<NadRef> nadOf(const std::string& node) const;
  const std::string& daemonNamespace() const {
    return daemon_namespace.empty() ? ns : daemon_namespace;
  }
};

// The generated --help text.
std::string preflightUsage();
// args excludes "preflight". Error 7 whose message starts with the flag it is about
// ("--node-network: \"vm1\" is not NODE=[NS/]NAME").
Result<PreflightOptions> parsePreflightArgs(const std::vector<std::string>& args);

}  // namespace rdmanet::doctor::preflight
