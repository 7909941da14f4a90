// `rdmanet-doctor preflight`'s command line, on the project's CLI11 conventions
// (common/cli/command_line.h): generated --help, --version, errors naming the flag.
#include "deviceplugin/doctor/preflight/options.h"

#include <fmt/format.h>

#include <sstream>

#include "common/cli/command_line.h"
#include "common/kube/names.h"

namespace rdmanet::doctor::preflight {
namespace {

constexpr const char* kDescription =
    "Cross-node RDMA pre-flight, run by a cluster admin before a training job. Finds the\n"
    "nodes with rdmanet devices, starts a probe server pod on each and, one pair at a time,\n"
    "a client pod that measures RDMA bandwidth against the port speed, RTT p50/p99, the MTU\n"
    "end to end and the traffic class, and the loss counters that grew; reads each node's\n"
    "doctor checklist and RDMA counters from rdmanet's daemon (through the API server's pod\n"
    "proxy) and records the counters as a baseline ConfigMap. Each node needs two free\n"
    "devices (its server's and its client's). One pre-flight runs at a time per namespace:\n"
    "a run deletes the probe pods earlier runs left there. Every pod of the run is deleted\n"
    "at the end, also on failure and on SIGINT/SIGTERM (unless --keep).\n"
    "Exit 0: no FAIL; 1: a FAIL; 2: usage error, or the API failed before any probe ran.";

// The flags as given, before they are checked and resolved into PreflightOptions.
struct Raw {
  std::string nodes{};
  std::string pairs = "auto";
  std::string network{};
  std::vector<std::string> node_networks{};
  std::string probe_command{};
};

struct Parsing {
  PreflightOptions o{};
  Raw raw{};
  bool help = false;
  bool version = false;
};

CLI::Validator check(std::function<bool(const std::string&)> ok, const std::string& what) {
  return CLI::Validator(
      [ok = std::move(ok), what](const std::string& v) {
        return ok(v) ? std::string() : fmt::format("\"{}\" is not {}", v, what);
      },
      "", what);
}

// "domain/name" of an extended resource (rdma/vf, example.com/gpu).
bool isResourceName(const std::string& v) {
  const auto slash = v.find('/');
  if (slash == std::string::npos) return kube::isQualifiedNamePart(v);
  return kube::isDnsSubdomain(v.substr(0, slash)) && kube::isQualifiedNamePart(v.substr(slash + 1));
}

// "[NS/]NAME" with the pod namespace as the default, as Multus resolves a bare name.
std::optional<NadRef> parseNad(const std::string& text, const std::string& pod_ns) {
  const auto slash = text.find('/');
  NadRef r{.ns = slash == std::string::npos ? pod_ns : text.substr(0, slash),
           .name = slash == std::string::npos ? text : text.substr(slash + 1)};
  if (!kube::isDnsLabel(r.ns) || !kube::isDnsSubdomain(r.name)) return std::nullopt;
  return r;
}

void defineFlags(CLI::App& app, Parsing& p) {
  PreflightOptions& o = p.o;
  app.name("rdmanet-doctor preflight");
  app.description(kDescription);
  cli::configure(app);
  cli::textOption(app, "--kubeconfig", o.kubeconfig,
                  "kubeconfig file (default $KUBECONFIG, else the pod's\n"
                  "service account)",
                  "FILE");
  cli::textOption(app, "--context", o.context, "the kubeconfig context (default its current)",
                  "NAME");
  cli::textOption(app, "--nodes", p.raw.nodes,
                  "the nodes to test (default: every node with --resource, or with a\n"
                  "ResourceSlice of --driver under --claim-template)",
                  "A,B,...");
  app.add_option("--resource", o.resource, "the device plugin's resource (default rdma/vf)")
      ->type_name("NAME")
      ->check(check(isResourceName, "a resource name (domain/name)"));
  app.add_option("--claim-template", o.claim_template,
                 "DRA mode: each probe pod's device is a claim from this\n"
                 "ResourceClaimTemplate (in --namespace); the nodes are those with a\n"
                 "ResourceSlice of --driver")
      ->type_name("NAME")
      ->check(check(kube::isDnsSubdomain, "an object name"));
  app.add_option("--driver", o.driver, "the DRA driver (default rdma.rdmanet.io)")
      ->type_name("NAME")
      ->check(check(kube::isDnsSubdomain, "a driver name"));
  app.add_option("--pairs", p.raw.pairs,
                 "ring (node i -> i+1) or all (every ordered pair);\n"
                 "default all up to 8 nodes, else ring")
      ->type_name("ring|all")
      ->check(check([](const std::string& v) { return v == "ring" || v == "all"; }, "ring or all"));
  app.add_option("--namespace", o.ns, "where the probe pods run (default rdmanet)")
      ->type_name("NS")
      ->check(check(kube::isDnsLabel, "a namespace name"));
  cli::textOption(app, "--image", o.image,
                  "the probe pods' image, holding the probe command (required)", "IMAGE");
  app.add_option("--image-pull-policy", o.image_pull_policy,
                 "the probe pods' imagePullPolicy (default: the cluster's)")
      ->type_name("POLICY")
      ->check(check(
          [](const std::string& v) { return v == "Always" || v == "IfNotPresent" || v == "Never"; },
          "Always, IfNotPresent or Never"));
  cli::textOption(app, "--network", p.raw.network,
                  "the NetworkAttachmentDefinition attached as eth1\n"
                  "(NS defaults to --namespace)",
                  "[NS/]NAME");
  app.add_option("--node-network", p.raw.node_networks,
                 "this node's NAD instead of --network (repeatable)")
      ->type_name("NODE=[NS/]NAME")
      ->allow_extra_args(false);
  app.add_flag("--privileged", o.privileged,
               "run the probe containers privileged, with the host's\n"
               "/dev/infiniband mounted: for nodes whose RDMA device is made\n"
               "outside the pod (Soft-RoCE over the VF)");
  cli::textOption(app, "--probe-command", p.raw.probe_command,
                  "the probe in the image, split on spaces\n"
                  "(default \"rdmanet-device-plugin doctor probe\")",
                  "CMD");
  app.add_option("--timeout", o.timeout_s,
                 "seconds the server pods have to start, and each pair's\n"
                 "client to finish (default 300)")
      ->type_name("S")
      ->check(cli::intIn(1, 86400));
  app.add_option("--count", o.count, "ping-pong messages per pair (default 200)")
      ->type_name("N")
      ->check(cli::intIn(1, 1000000));
  app.add_option("--dscp", o.dscp, "the pool's RoCE DSCP, 0-63 (default 26)")
      ->type_name("D")
      ->check(cli::intIn(0, 63));
  app.add_option("--priority", o.priority, "the pool's lossless priority, 0-7 (default 3)")
      ->type_name("P")
      ->check(cli::intIn(0, 7));
  app.add_option("--daemon-namespace", o.daemon_namespace,
                 "where rdmanet's daemon pods run (default --namespace)")
      ->type_name("NS")
      ->check(check(kube::isDnsLabel, "a namespace name"));
  app.add_option("--daemon-metrics-port", o.daemon_metrics_port,
                 "the daemon's /metrics port (default 9109)")
      ->type_name("PORT")
      ->check(cli::intIn(1, 65535));
  app.add_option("--bw-percent", o.bw_percent,
                 "a pair FAILs below this % of the port speed (default 90)")
      ->type_name("PCT")
      ->check(cli::numberIn(0.1, 100));
  app.add_option("--rtt-p99-max-us", o.rtt_p99_max_us,
                 "a pair FAILs above this RTT p99 in microseconds (default 1000)")
      ->type_name("US")
      ->check(cli::numberIn(1, 1e9));
  app.add_option("--rtt-p50-max-us", o.rtt_p50_max_us,
                 "a pair FAILs above this RTT median in microseconds (default: no ceiling)")
      ->type_name("US")
      ->check(cli::numberIn(1, 1e9));
  app.add_option("--loss-max", o.loss_max,
                 "a pair FAILs when its loss counters grew by more (default 0)")
      ->type_name("N")
      ->check(cli::intIn(0, 1000000000));
  app.add_option("--rtt-spread-max", o.rtt_spread_max,
                 "a pair WARNs above this RTT p99/p50 (default 4)")
      ->type_name("X")
      ->check(cli::numberIn(1, 1e6));
  app.add_option_function<int>(
         "--mtu", [&o](const int& m) { o.mtu = m; },
         "the MTU every path must carry (default: the NAD's \"mtu\",\n"
         "else the ends' own)")
      ->type_name("BYTES")
      ->check(cli::intIn(576, 65535));
  app.add_flag("--no-baseline", o.no_baseline, "do not record the counters' baseline ConfigMap");
  app.add_flag("--keep", o.keep, "leave the probe pods in place (to look at them)");
  app.add_flag("--json", o.json, "print the report as JSON");
}

std::vector<std::string> splitOn(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

Error usage(std::string msg) { return makeError(ErrorCode::kInvalidConfig, std::move(msg)); }

// The raw flags checked and resolved (NAD namespaces need --namespace, whatever its place).
Status resolve(const Raw& raw, PreflightOptions& o) {
  for (const auto& n : splitOn(raw.nodes, ',')) {
    if (!kube::isDnsSubdomain(n))
      return usage(fmt::format("--nodes: \"{}\" is not a node name", n));
    o.nodes.push_back(n);
  }
  o.pairs = raw.pairs == "ring"  ? PairMode::kRing
            : raw.pairs == "all" ? PairMode::kAll
                                 : PairMode::kAuto;
  if (!raw.network.empty()) {
    o.network = parseNad(raw.network, o.ns);
    if (!o.network) {
      return usage(fmt::format("--network: \"{}\" is not [NS/]NAME of a NAD", raw.network));
    }
  }
  for (const auto& nn : raw.node_networks) {
    const auto eq = nn.find('=');
    const std::string node = nn.substr(0, eq);
    std::optional<NadRef> nad;
    if (eq != std::string::npos) nad = parseNad(nn.substr(eq + 1), o.ns);
    if (eq == std::string::npos || !kube::isDnsSubdomain(node) || !nad) {
      return usage(fmt::format("--node-network: \"{}\" is not NODE=[NS/]NAME", nn));
    }
    if (!o.node_networks.emplace(node, *nad).second) {
      return usage(fmt::format("--node-network: node \"{}\" is given twice", node));
    }
  }
  if (!raw.probe_command.empty()) o.probe_command = splitOn(raw.probe_command, ' ');
  if (o.probe_command.empty()) return usage("--probe-command: empty value");
  if (o.image.empty()) return usage("--image: required (the image that holds the probe)");
  if (!o.network && o.node_networks.empty()) {
    return usage("--network: required (the NAD the probe pods attach as eth1), or --node-network");
  }
  return okStatus();
}

}  // namespace

std::optional<NadRef> PreflightOptions::nadOf(const std::string& node) const {
  if (auto it = node_networks.find(node); it != node_networks.end()) return it->second;
  return network;
}

std::string preflightUsage() { return cli::helpOf<Parsing>(defineFlags); }

Result<PreflightOptions> parsePreflightArgs(const std::vector<std::string>& args) {
  RDMANET_ASSIGN_OR_RETURN(Parsing p, cli::parseInto<Parsing>(args, defineFlags));
  p.o.help = p.help;
  p.o.version = p.version;
  if (p.help || p.version) return p.o;
  RDMANET_RETURN_IF_ERROR(resolve(p.raw, p.o));
  return p.o;
}

}  // namespace rdmanet::doctor::preflight
