#include "common/dra/net_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/base/mac_address.h"
#include "common/json/json_access.h"
#include "common/json/json_dump.h"
#include "common/kube/names.h"
#include "common/net/ip.h"

namespace rdmanet::dra {

using nlohmann::json;

namespace {

constexpr size_t kMaxContainerId = 256;
constexpr size_t kMaxIfname = 15;  // IFNAMSIZ - 1

Error bad(std::string_view field, std::string_view why) {
  return makeError(ErrorCode::kInvalidConfig, fmt::format("network report: {} {}", field, why));
}

bool printableAscii(char c) { return c >= 0x20 && c < 0x7f; }

// A claim UID as kubelet and the API server write it (an RFC 4122 string).
bool plausibleUid(std::string_view s) {
  return !s.empty() && s.size() <= 63 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// What the kernel accepts as a link name, less what would be awkward in YAML or a log line.
bool validIfname(std::string_view s) {
  return !s.empty() && s.size() <= kMaxIfname && s != "." && s != ".." &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return printableAscii(c) && c != '/' && c != ' ' && c != ':'; });
}

bool validContainerId(std::string_view s) {
  return !s.empty() && s.size() <= kMaxContainerId && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

std::string cleanMessage(std::string_view msg) {
  std::string out(msg.substr(0, kMaxErrorMessage));
  std::replace_if(
      out.begin(), out.end(), [](char c) { return !printableAscii(c); }, '?');
  return out;
}

Result<std::string> stringField(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_string()) return bad(key, "must be a string");
  return it->get<std::string>();
}

}  // namespace

std::string netReportName(std::string_view claim_uid, std::string_view device) {
  return fmt::format("{}.{}{}", claim_uid, device, kReportSuffix);
}

std::optional<NetReportKey> parseNetReportName(std::string_view filename) {
  if (!filename.ends_with(kReportSuffix)) return std::nullopt;
  filename.remove_suffix(kReportSuffix.size());
  const size_t dot = filename.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  NetReportKey key{.claim_uid = std::string(filename.substr(0, dot)),
                   .device = std::string(filename.substr(dot + 1))};
  if (!plausibleUid(key.claim_uid) || !kube::isDnsLabel(key.device)) return std::nullopt;
  return key;
}

std::string renderNetReport(const NetReport& r) {
  json doc = {{"containerID", r.container_id}, {"interfaceName", r.interface_name}};
  if (r.error_code) {
    doc["error"] = {{"code", *r.error_code}, {"msg", cleanMessage(r.error_message)}};
  } else {
    doc["ips"] = r.ips;
    if (!r.hardware_address.empty()) doc["hardwareAddress"] = r.hardware_address;
  }
  return dumpJson(doc) + "\n";
}

Result<NetReport> parseNetReport(std::string_view text) {
  if (text.size() > kMaxReportBytes) {
    return bad("file", fmt::format("is over {} bytes", kMaxReportBytes));
  }
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return makeError(ErrorCode::kDecodeFailure, "network report: not JSON");
  }
  if (!doc.is_object()) return bad("document", "must be an object");
  static const std::set<std::string> kKeys = {"containerID", "interfaceName", "ips",
                                              "hardwareAddress", "error"};
  for (const auto& [key, value] : doc.items()) {
    if (!kKeys.contains(key)) return bad(fmt::format("key \"{}\"", key), "is not known");
  }
  NetReport r;
  RDMANET_ASSIGN_OR_RETURN(r.container_id, stringField(doc, "containerID"));
  if (!validContainerId(r.container_id)) return bad("containerID", "is not a container ID");
  RDMANET_ASSIGN_OR_RETURN(r.interface_name, stringField(doc, "interfaceName"));
  if (!validIfname(r.interface_name)) return bad("interfaceName", "is not a link name");

  if (const auto err = doc.find("error"); err != doc.end()) {
    // A failed ADD reports its error and nothing of the device's network.
    if (doc.contains("ips") || doc.contains("hardwareAddress")) {
      return bad("error", "comes without ips and hardwareAddress");
    }
    if (!err->is_object() || err->size() != 2) return bad("error", "must be {code, msg}");
    const auto code = optInt(*err, "code", 1, 999);
    if (!code.ok() || !code->has_value()) {
      return bad("error.code", "must be a CNI error code (1..999)");
    }
    r.error_code = static_cast<int>(**code);
    RDMANET_ASSIGN_OR_RETURN(r.error_message, stringField(*err, "msg"));
    if (r.error_message.size() > kMaxErrorMessage ||
        !std::all_of(r.error_message.begin(), r.error_message.end(), printableAscii)) {
      return bad("error.msg",
                 fmt::format("must be printable ASCII of at most {} characters", kMaxErrorMessage));
    }
    return r;
  }

  const auto ips = doc.find("ips");
  if (ips == doc.end() || !ips->is_array()) return bad("ips", "must be an array");
  if (ips->size() > kMaxReportIps) return bad("ips", fmt::format("has over {}", kMaxReportIps));
  std::set<std::string> seen;
  for (const json& ip : *ips) {
    if (!ip.is_string()) return bad("ips", "must hold strings");
    const auto text_ip = ip.get<std::string>();
    auto prefix = IpPrefix::parse(text_ip);
    // The API server takes only canonical interface addresses (IsValidInterfaceAddress).
    if (!prefix.ok() || prefix->str() != text_ip) {
      return bad(fmt::format("ips entry \"{}\"", cleanMessage(text_ip)),
                 "is not a canonical address/prefix");
    }
    if (!seen.insert(text_ip).second) return bad("ips", fmt::format("repeats {}", text_ip));
    r.ips.push_back(text_ip);
  }
  if (doc.contains("hardwareAddress")) {
    RDMANET_ASSIGN_OR_RETURN(r.hardware_address, stringField(doc, "hardwareAddress"));
    auto mac = MacAddress::parse(r.hardware_address);
    if (!mac.ok() || mac->str() != r.hardware_address) {
      return bad("hardwareAddress", "is not a lowercase colon-separated MAC");
    }
  }
  return r;
}

}  // namespace rdmanet::dra
