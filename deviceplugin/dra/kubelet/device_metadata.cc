#include "deviceplugin/dra/kubelet/device_metadata.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <variant>

#include "common/json/json_dump.h"
#include "common/kube/names.h"
#include "deviceplugin/dra/device_attributes.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"

namespace rdmanet::dp {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A DeviceAttribute as resource.k8s.io/v1 spells it: exactly one of its value fields.
json attributeJson(const dra::AttributeValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) return {{"string", x}};
        if constexpr (std::is_same_v<T, int64_t>) return {{"int", x}};
        if constexpr (std::is_same_v<T, bool>) return {{"bool", x}};
        if constexpr (std::is_same_v<T, dra::Version>) return {{"version", x.text}};
      },
      v);
}

json deviceJson(const MetadataClaim& claim, const ResolvedDevice& d) {
  json attrs = json::object();
  for (const auto& [name, value] : deviceAttributes(*d.node, d.pool->config)) {
    attrs[name] = attributeJson(value);
  }
  json out = {{"driver", claim.driver}, {"pool", claim.pool}, {"name", d.node->name}};
  if (!attrs.empty()) out["attributes"] = std::move(attrs);
  return out;
}

Status checkSegment(std::string_view what, std::string_view name, bool subdomain = false) {
  if (subdomain ? kube::isDnsSubdomain(name) : kube::isDnsLabel(name)) return okStatus();
  return makeError(ErrorCode::kInvalidConfig,
                   fmt::format("device metadata: {} \"{}\" is not a DNS {}", what, name,
                               subdomain ? "subdomain" : "label"));
}

}  // namespace

std::string deviceMetadataStream(const MetadataClaim& claim, std::string_view request,
                                 const std::vector<ResolvedDevice>& devices) {
  json devs = json::array();
  for (const ResolvedDevice& d : devices) devs.push_back(deviceJson(claim, d));
  json doc = {{"kind", kMetadataKind},
              {"metadata",
               {{"name", claim.ref.name},
                {"namespace", claim.ref.ns},
                {"uid", claim.ref.uid},
                {"generation", 1}}},
              {"requests", json::array({{{"name", request}, {"devices", std::move(devs)}}})}};
  if (claim.pod_claim_name) doc["podClaimName"] = *claim.pod_claim_name;
  std::string out;
  for (std::string_view version : kMetadataVersions) {
    doc["apiVersion"] = fmt::format("{}/{}", kMetadataGroup, version);
    out += dumpJson(doc, 2) + "\n";
  }
  return out;
}

std::optional<std::string> podClaimNameOf(const kube::ResourceClaim& claim) {
  const auto& notes = claim.metadata.annotations;
  auto it = notes.find(std::string(kPodClaimNameAnnotation));
  if (it == notes.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::string metadataContainerPath(const MetadataClaim& claim, std::string_view request) {
  const bool templated = claim.pod_claim_name && !claim.pod_claim_name->empty();
  return fmt::format("{}/{}/{}/{}/{}-metadata.json", kMetadataContainerDir,
                     templated ? "resourceclaimtemplates" : "resourceclaims",
                     templated ? *claim.pod_claim_name : claim.ref.name, request, claim.driver);
}

std::string metadataSpecFileName(std::string_view driver, std::string_view claim_uid,
                                 std::string_view request) {
  return fmt::format("{}_metadata_{}_{}.json", driver, claim_uid, request);
}

std::string metadataCdiKind(std::string_view driver) { return fmt::format("{}/metadata", driver); }

Result<RequestMetadata> renderRequestMetadata(const MetadataClaim& claim, std::string_view request,
                                              const std::vector<ResolvedDevice>& devices,
                                              const fs::path& dir, const fs::path& cdi_dir) {
  const std::string_view base = baseRequest(request);
  // Each goes into a path, on the node or in the container.
  if (!isValidClaimUid(claim.ref.uid)) {
    return makeError(ErrorCode::kInvalidConfig, "device metadata: malformed claim UID");
  }
  RDMANET_RETURN_IF_ERROR(checkSegment("request", base));
  RDMANET_RETURN_IF_ERROR(checkSegment("claim name", claim.ref.name, /*subdomain=*/true));
  if (claim.pod_claim_name) {
    RDMANET_RETURN_IF_ERROR(checkSegment("pod claim name", *claim.pod_claim_name));
  }
  RequestMetadata out{
      .request = std::string(base),
      .host_file = dir / claim.ref.uid / base / "metadata.json",
      .content = deviceMetadataStream(claim, request, devices),
      .cdi_spec = cdi_dir / metadataSpecFileName(claim.driver, claim.ref.uid, base)};
  const std::string name = fmt::format("{}_{}", claim.ref.uid, base);
  out.cdi = {.name = name,
             .edits = {.mounts = {{.container_path = metadataContainerPath(claim, base),
                                   .host_path = out.host_file.string(),
                                   .read_only = true}}}};
  out.cdi_id = fmt::format("{}={}", metadataCdiKind(claim.driver), name);
  return out;
}

}  // namespace rdmanet::dp
