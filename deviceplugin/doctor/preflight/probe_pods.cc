#include "deviceplugin/doctor/preflight/probe_pods.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include "common/json/json_access.h"

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;

const json* at(const json& j, std::initializer_list<std::string_view> path) {
  const json* cur = &j;
  for (auto key : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end() || it->is_null()) return nullptr;
    cur = &*it;
  }
  return cur;
}

std::string stringAt(const json& j, std::initializer_list<std::string_view> path) {
  const json* v = at(j, path);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

bool isIpv4(const std::string& s) {
  in_addr a{};
  return inet_pton(AF_INET, s.c_str(), &a) == 1;
}

}  // namespace

std::string probePodName(const std::string& run_id, Role role, size_t index) {
  return fmt::format("rdmanet-preflight-{}-{}-{}", run_id,
                     role == Role::kServer ? "server" : "client", index);
}

std::vector<std::string> serverCommand(const PreflightOptions& o) {
  auto c = o.probe_command;
  c.insert(c.end(), {"--listen", "--exchange", "tcp", "--wait-device", "120"});
  return c;
}

std::vector<std::string> clientCommand(const PreflightOptions& o, const std::string& server_ip) {
  auto c = o.probe_command;
  c.insert(c.end(),
           {server_ip, "--exchange", "tcp", "--wait-device", "120", "--bandwidth", "--count",
            std::to_string(o.count), "--mtu-sweep", "--dscp", std::to_string(o.dscp), "--priority",
            std::to_string(o.priority), "--summary-file", "/dev/termination-log"});
  return c;
}

json probePodManifest(const PreflightOptions& o, const std::string& run_id, const ProbePod& pod) {
  const std::string role = pod.role == Role::kServer ? "server" : "client";
  json annotations = {
      {kNodeAnnotation, pod.node},
      {kNetworksAnnotation,
       json::array({{{"name", pod.nad.name}, {"namespace", pod.nad.ns}, {"interface", "eth1"}}})
           .dump()}};
  if (!pod.peer_node.empty()) annotations[kPeerAnnotation] = pod.peer_node;
  json container = {
      {"name", "probe"},
      {"image", o.image},
      {"command", pod.command},
      // A client's message is the summary file alone; a server that dies says why
      // through its last log lines.
      {"terminationMessagePolicy", pod.role == Role::kClient ? "File" : "FallbackToLogsOnError"},
      {"securityContext", {{"capabilities", {{"add", {"IPC_LOCK"}}}}}}};
  if (!o.image_pull_policy.empty()) container["imagePullPolicy"] = o.image_pull_policy;
  json spec = {{"nodeSelector", {{"kubernetes.io/hostname", pod.node}}},
               {"restartPolicy", "Never"},
               {"terminationGracePeriodSeconds", 1}};
  if (o.claim_template.empty()) {
    container["resources"] = {{"limits", {{o.resource, "1"}}}};
  } else {
    container["resources"] = {{"claims", {{{"name", "nic"}}}}};
    spec["resourceClaims"] = {{{"name", "nic"}, {"resourceClaimTemplateName", o.claim_template}}};
  }
  if (o.privileged) {
    // Soft-RoCE over the VF: the RDMA device is made on the node after the pod starts, so no
    // device is handed in; the pod opens the node's uverbs nodes itself.
    container["securityContext"]["privileged"] = true;
    container["volumeMounts"] = {{{"name", "infiniband"}, {"mountPath", "/dev/infiniband"}}};
    spec["volumes"] = {
        {{"name", "infiniband"},
         {"hostPath", {{"path", "/dev/infiniband"}, {"type", "DirectoryOrCreate"}}}}};
  }
  spec["containers"] = json::array({container});
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", pod.name},
            {"namespace", o.ns},
            {"labels", {{kAppLabel, kAppName}, {kRunLabel, run_id}, {kRoleLabel, role}}},
            {"annotations", annotations}}},
          {"spec", spec}};
}

std::string PodProgress::describe() const {
  std::string s = phase.empty() ? "Pending" : phase;
  if (terminated) s += fmt::format(", exit code {}", exit_code);
  if (!reason.empty() || !detail.empty()) {
    s += fmt::format(" ({}{}{})", reason, !reason.empty() && !detail.empty() ? ": " : "", detail);
  }
  return s;
}

PodProgress podProgress(const json& pod) {
  PodProgress p;
  p.phase = stringAt(pod, {"status", "phase"});
  // Kubelet's word on a pod it refused or evicted (UnexpectedAdmissionError: a device plugin
  // that could not allocate; Evicted), overridden by anything more precise below.
  p.reason = stringAt(pod, {"status", "reason"});
  p.detail = stringAt(pod, {"status", "message"});
  if (const json* conds = at(pod, {"status", "conditions"}); conds && conds->is_array()) {
    for (const auto& c : *conds) {
      if (stringAt(c, {"type"}) == "PodScheduled" && stringAt(c, {"status"}) == "False") {
        p.reason = stringAt(c, {"reason"});
        p.detail = stringAt(c, {"message"});
      }
    }
  }
  const json* cs = at(pod, {"status", "containerStatuses"});
  if (cs == nullptr || !cs->is_array() || cs->empty()) return p;
  const json& c = cs->front();
  if (const json* t = at(c, {"state", "terminated"})) {
    p.terminated = true;
    // A container's exit code is 0..255 (signals 128+n); anything else reads as a failure.
    const json* code = at(*t, {"exitCode"});
    const auto n = code != nullptr ? asInt(*code, "exitCode", 0, 255) : Result<int64_t>(255);
    p.exit_code = n.ok() ? static_cast<int>(*n) : 255;
    p.message = stringAt(*t, {"message"});
    p.reason = stringAt(*t, {"reason"});
    p.detail.clear();
  } else if (const json* w = at(c, {"state", "waiting"})) {
    p.reason = stringAt(*w, {"reason"});
    p.detail = stringAt(*w, {"message"});
  }
  return p;
}

std::optional<std::string> eth1Ipv4(const json& pod) {
  const std::string text = stringAt(pod, {"metadata", "annotations", kNetworkStatusAnnotation});
  if (text.empty()) return std::nullopt;
  const json list = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) return std::nullopt;
  for (const auto& net : list) {
    if (stringAt(net, {"interface"}) != "eth1") continue;
    const json* ips = at(net, {"ips"});
    if (ips == nullptr || !ips->is_array()) continue;
    for (const auto& ip : *ips) {
      if (ip.is_string() && isIpv4(ip.get<std::string>())) return ip.get<std::string>();
    }
  }
  return std::nullopt;
}

}  // namespace rdmanet::doctor::preflight
