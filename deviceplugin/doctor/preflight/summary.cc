#include "deviceplugin/doctor/preflight/summary.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "common/json/json_access.h"

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;

constexpr double kMaxMeasure = 1e12;  // above any RTT in us or rate in Gbit/s
constexpr int64_t kMaxMtu = 1 << 20;  // above any interface's (IP_MAX_MTU is 65535)

Status readInt(const json& j, std::string_view key, int64_t lo, int64_t hi,
               std::optional<int>& into) {
  RDMANET_ASSIGN_OR_RETURN(std::optional<int64_t> v, optInt(j, key, lo, hi));
  if (v) into = static_cast<int>(*v);
  return okStatus();
}

Status readNumber(const json& j, std::string_view key, std::optional<double>& into) {
  RDMANET_ASSIGN_OR_RETURN(into, optNumber(j, key, 0, kMaxMeasure));
  return okStatus();
}

Status readString(const json& j, std::string_view key, std::string& into) {
  RDMANET_ASSIGN_OR_RETURN(std::optional<std::string> v, optString(j, key));
  if (v) into = std::move(*v);
  return okStatus();
}

}  // namespace

Result<ProbeSummary> parseProbeSummary(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return makeError(ErrorCode::kDecodeFailure, "the probe's summary is not JSON");
  }
  if (!j.is_object()) return jsonTypeError("summary", "an object");
  ProbeSummary s;
  std::optional<int> version;
  RDMANET_RETURN_IF_ERROR(readInt(j, "v", 1, 1000, version));
  s.version = version.value_or(1);
  RDMANET_ASSIGN_OR_RETURN(std::optional<bool> pass, optBool(j, "pass"));
  s.pass = pass.value_or(false);
  if (const json* p = jsonMember(j, "problems")) {
    RDMANET_ASSIGN_OR_RETURN(s.problems, asStringArray(*p, "problems"));
  }
  RDMANET_RETURN_IF_ERROR(readString(j, "failed_stage", s.failed_stage));
  RDMANET_RETURN_IF_ERROR(readString(j, "error", s.error));
  RDMANET_RETURN_IF_ERROR(readString(j, "device", s.device));
  RDMANET_RETURN_IF_ERROR(readInt(j, "gid_index", -1, 65535, s.gid_index));
  RDMANET_RETURN_IF_ERROR(readInt(j, "traffic_class", -1, 255, s.traffic_class));
  RDMANET_RETURN_IF_ERROR(readInt(j, "sl", -1, 15, s.sl));
  RDMANET_RETURN_IF_ERROR(readNumber(j, "rtt_p50_us", s.rtt_p50_us));
  RDMANET_RETURN_IF_ERROR(readNumber(j, "rtt_p99_us", s.rtt_p99_us));
  RDMANET_RETURN_IF_ERROR(readNumber(j, "rtt_max_us", s.rtt_max_us));
  RDMANET_RETURN_IF_ERROR(readInt(j, "rtts", 0, std::numeric_limits<int>::max(), s.rtts));
  RDMANET_RETURN_IF_ERROR(readInt(j, "count", 0, std::numeric_limits<int>::max(), s.count));
  RDMANET_RETURN_IF_ERROR(readNumber(j, "gbps", s.gbps));
  RDMANET_RETURN_IF_ERROR(readNumber(j, "port_gbps", s.port_gbps));
  RDMANET_RETURN_IF_ERROR(readInt(j, "local_mtu", 0, kMaxMtu, s.local_mtu));
  RDMANET_RETURN_IF_ERROR(readInt(j, "peer_mtu", 0, kMaxMtu, s.peer_mtu));
  RDMANET_RETURN_IF_ERROR(readInt(j, "path_mtu", 0, kMaxMtu, s.path_mtu));
  RDMANET_RETURN_IF_ERROR(readInt(j, "roce_mtu", 0, kMaxMtu, s.roce_mtu));
  RDMANET_ASSIGN_OR_RETURN(const json* delta, optObject(j, "counters_delta"));
  if (delta != nullptr) {
    for (const auto& [name, v] : delta->items()) {
      RDMANET_ASSIGN_OR_RETURN(
          int64_t n, asInt(v, "counters_delta." + name, 0, std::numeric_limits<int64_t>::max()));
      s.counters_delta[name] = static_cast<uint64_t>(n);
    }
  }
  return s;
}

}  // namespace rdmanet::doctor::preflight
