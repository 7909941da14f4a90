#include "deviceplugin/doctor/preflight/cluster_reads.h"

#include <fmt/format.h>

#include "common/kube/api_error.h"
#include "deviceplugin/doctor/counters.h"
#include "deviceplugin/doctor/preflight/plan.h"

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// Each API request's own bound; the run's waits have --timeout.
Deadline requestDeadline(const Clock& clock) { return Deadline::in(30s, clock); }

// Every item of a list, read in pages (a large cluster's NodeList need not come in one answer).
Result<json> listAll(kube::KubeClient& c, const Clock& clock, const std::string& path,
                     kube::ListOptions opts) {
  json all = {{"items", json::array()}};
  opts.limit = 500;
  for (;;) {
    RDMANET_ASSIGN_OR_RETURN(json page, c.list(path, opts, requestDeadline(clock)));
    if (page.contains("items") && page["items"].is_array()) {
      for (auto& i : page["items"]) all["items"].push_back(std::move(i));
    }
    const json* meta = page.contains("metadata") ? &page["metadata"] : nullptr;
    if (meta == nullptr || !meta->contains("continue") || !(*meta)["continue"].is_string() ||
        (*meta)["continue"].get<std::string>().empty()) {
      return all;
    }
    opts.continue_token = (*meta)["continue"].get<std::string>();
  }
}

}  // namespace

Result<std::vector<std::string>> findNodes(kube::KubeClient& c, const Clock& clock,
                                           const PreflightOptions& o) {
  if (!o.nodes.empty()) return o.nodes;
  if (o.claim_template.empty()) {
    auto list = listAll(c, clock, "/api/v1/nodes", {});
    if (!list.ok()) return list.error().context("listing the nodes");
    return nodesWithResource(*list, o.resource);
  }
  auto list = listAll(c, clock, "/apis/resource.k8s.io/v1/resourceslices",
                      {.field_selector = "spec.driver=" + o.driver});
  if (!list.ok()) return list.error().context("listing the ResourceSlices");
  return nodesWithSlices(*list, o.driver);
}

Result<std::map<std::string, MtuExpectation>> expectedMtus(kube::KubeClient& c, const Clock& clock,
                                                           const PreflightOptions& o,
                                                           const std::vector<std::string>& nodes) {
  std::map<std::string, MtuExpectation> out;
  std::map<std::string, std::optional<int>> by_nad;  // each NAD read once
  for (const auto& n : nodes) {
    const auto nad = o.nadOf(n);
    if (!nad) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("node {} has no NAD: give --network or --node-network {}=NAD", n, n));
    }
    if (!by_nad.contains(nad->text())) {
      auto got = c.get(fmt::format("/apis/k8s.cni.cncf.io/v1/namespaces/{}/"
                                   "network-attachment-definitions/{}",
                                   nad->ns, nad->name),
                       requestDeadline(clock));
      if (!got.ok()) {
        return got.error().context(
            kube::isNotFound(got.error())
                ? fmt::format("NetworkAttachmentDefinition {} does not exist", nad->text())
                : fmt::format("reading NetworkAttachmentDefinition {}", nad->text()));
      }
      auto mtu = nadMtu(*got);
      if (!mtu.ok()) return mtu.error().context("NAD " + nad->text());
      by_nad[nad->text()] = *mtu;
    }
    if (o.mtu) {
      out[n] = {.mtu = o.mtu, .source = "--mtu"};
    } else {
      out[n] = {.mtu = by_nad[nad->text()], .source = fmt::format("the NAD {}'s", nad->text())};
    }
  }
  return out;
}

NodeHealth readNodeHealth(kube::KubeClient& c, const Clock& clock, const PreflightOptions& o,
                          const std::string& node) {
  NodeHealth h{.node = node};
  const std::string& ns = o.daemonNamespace();
  auto pods = c.list(fmt::format("/api/v1/namespaces/{}/pods", ns),
                     {.label_selector = "app.kubernetes.io/component=node",
                      .field_selector = "spec.nodeName=" + node},
                     requestDeadline(clock));
  if (!pods.ok()) {
    h.reason = fmt::format("listing rdmanet's daemon pods in {}: {}", ns, pods.error().msg);
    return h;
  }
  for (const auto& p : (*pods).value("items", json::array())) {
    const json* phase = p.contains("status") ? &p["status"] : nullptr;
    if (phase != nullptr && phase->value("phase", "") == "Running") {
      h.daemon_pod = p["metadata"].value("name", "");
      break;
    }
  }
  if (h.daemon_pod.empty()) {
    h.reason = fmt::format(
        "no running rdmanet daemon pod (app.kubernetes.io/component=node) in "
        "namespace {} on the node",
        ns);
    return h;
  }
  auto text = c.getText(fmt::format("/api/v1/namespaces/{}/pods/{}:{}/proxy/metrics", ns,
                                    h.daemon_pod, o.daemon_metrics_port),
                        requestDeadline(clock));
  h.daemon_pod = ns + "/" + h.daemon_pod;
  if (!text.ok()) {
    h.reason = fmt::format("reading {}'s /metrics: {}", h.daemon_pod, text.error().msg);
    return h;
  }
  if (auto st = parseDoctorMetrics(*text, h); !st.ok()) {
    h.checks.clear();
    h.counters.clear();
    h.reason = fmt::format("{}'s /metrics: {}", h.daemon_pod, st.error().msg);
    return h;
  }
  h.reached = true;
  return h;
}

BaselineRecord recordBaseline(kube::KubeClient& c, const Clock& clock, const PreflightOptions& o,
                              const std::vector<NodeHealth>& nodes, int64_t now) {
  BaselineRecord r{.configmap = fmt::format("{}/{}", o.ns, kBaselineConfigMap), .taken_at = now};
  json data = json::object();
  for (const auto& n : nodes) {
    if (!n.reached) continue;
    data[n.node] = snapshotToJson({.taken_at = now, .ports = n.counters});
    r.nodes.push_back(n.node);
  }
  if (r.nodes.empty()) {
    r.error = "no node's counters could be read";
    return r;
  }
  const std::string path =
      fmt::format("/api/v1/namespaces/{}/configmaps/{}", o.ns, kBaselineConfigMap);
  // Another writer between our read and write makes the update 409: read and merge again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto got = c.get(path, requestDeadline(clock));
    Result<json> written = Error{};
    if (!got.ok() && kube::isNotFound(got.error())) {
      written = c.create(fmt::format("/api/v1/namespaces/{}/configmaps", o.ns),
                         {{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata",
                           {{"name", kBaselineConfigMap},
                            {"labels", {{"app.kubernetes.io/name", "rdmanet-preflight"}}}}},
                          {"data", data}},
                         requestDeadline(clock));
    } else if (got.ok()) {
      json cm = *got;
      if (!cm.contains("data") || !cm["data"].is_object()) cm["data"] = json::object();
      cm["data"].update(data);
      written = c.update(path, cm, requestDeadline(clock));
    } else {
      r.error = got.error().msg;
      return r;
    }
    if (written.ok()) return r;
    r.error = written.error().msg;
    if (!kube::isConflict(written.error())) return r;
  }
  return r;
}

}  // namespace rdmanet::doctor::preflight
