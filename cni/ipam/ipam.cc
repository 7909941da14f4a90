#include "cni/ipam/ipam.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "cni/conf/json_util.h"
#include "cni/conf/version.h"

namespace rdmanet::cni {
namespace {

std::string fileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return fmt::format("{}:{}:{}", st.st_ino, st.st_size, st.st_mtim.tv_sec);
}

json withVersion(const json& conf, const std::string& version) {
  json c = conf;
  c["cniVersion"] = version;
  c.erase("cniVersions");
  // prevResult travels in the version the delegate was asked to speak.
  if (c.contains("prevResult") && c["prevResult"].is_object()) {
    auto prev = parseResult(c["prevResult"]);
    if (prev.ok()) {
      c["prevResult"] = resultToJson(*prev, version);
    } else {
      c.erase("prevResult");
    }
  }
  return c;
}

}  // namespace

Error delegateError(const std::string& type, const ExecOutput& out) {
  auto doc = parseJson(out.stdout_data, kDelegateLimits);
  if (doc.ok() && doc->is_object() && doc->contains("code")) {
    const json& j = *doc;
    const int code = static_cast<int>(intOr(j, "code", 999, 1, 999).valueOr(999));
    std::string msg = j.value("msg", std::string("IPAM plugin failed"));
    if (!j["msg"].is_string()) msg = "IPAM plugin failed";
    std::string details = j.contains("details") && j["details"].is_string()
                              ? j["details"].get<std::string>()
                              : std::string();
    Error e = makeError(static_cast<ErrorCode>(code), fmt::format("{}: {}", type, msg), details);
    return e;
  }
  return makeError(ErrorCode::kInternal,
                   fmt::format("{} exited with status {}", type, out.exit_code),
                   out.stdout_data.substr(0, 512));
}

Result<ExecOutput> Ipam::execOnce(const Call& call, const std::string& version) {
  ExecRequest req;
  req.type = call.type;
  req.path = call.env->path;
  req.env = {{"CNI_COMMAND", call.command},
             {"CNI_CONTAINERID", call.env->container_id},
             {"CNI_NETNS", call.env->netns},
             {"CNI_IFNAME", call.env->ifname},
             {"CNI_ARGS", call.env->args_raw},
             {"CNI_PATH", fmt::format("{}", fmt::join(call.env->path, ":"))}};
  req.stdin_data = call.command == "VERSION" ? dumpJson(json{{"cniVersion", version}})
                                             : dumpJson(withVersion(call.conf, version));
  return exec_.exec(req);
}

Result<std::vector<std::string>> Ipam::delegateVersions(const Call& call) {
  Call v = call;
  v.command = "VERSION";
  RDMANET_ASSIGN_OR_RETURN(ExecOutput out, execOnce(v, call.version));
  if (out.exit_code != 0) return delegateError(call.type, out);
  auto doc = parseJson(out.stdout_data, kDelegateLimits);
  std::vector<std::string> versions;
  if (doc.ok() && doc->is_object() && (*doc)["supportedVersions"].is_array()) {
    for (const auto& s : (*doc)["supportedVersions"]) {
      if (s.is_string()) versions.push_back(s.get<std::string>());
    }
  }
  return versions;
}

std::optional<std::string> Ipam::cachedVersion(const std::string& type, const std::string& path,
                                               const std::string& want) const {
  if (cache_ == nullptr) return std::nullopt;
  auto doc = cache_->readDoc("ipam/" + type + ".json");
  if (!doc.ok() || !doc->has_value()) return std::nullopt;
  const json& j = **doc;
  if (!j.is_object() || j.value("stamp", "") != fileStamp(path)) return std::nullopt;
  const json& m = j["versions"];
  if (!m.is_object() || !m.contains(want) || !m[want].is_string()) return std::nullopt;
  return m[want].get<std::string>();
}

void Ipam::rememberVersion(const std::string& type, const std::string& path,
                           const std::string& want, const std::string& got) const {
  if (cache_ == nullptr) return;
  json j = json::object();
  auto doc = cache_->readDoc("ipam/" + type + ".json");
  const std::string stamp = fileStamp(path);
  if (doc.ok() && doc->has_value() && (**doc).is_object() && (**doc).value("stamp", "") == stamp) {
    j = **doc;
  }
  j["stamp"] = stamp;
  j["versions"][want] = got;
  (void)cache_->writeDoc("ipam/" + type + ".json", j);  // a cache: losing it costs one exec
}

Result<CniResult> Ipam::run(const Call& call, std::string* used_version) {
  const std::string bin = findInPath(call.type, call.env->path).value_or("");
  std::string version = cachedVersion(call.type, bin, call.version).value_or(call.version);
  RDMANET_ASSIGN_OR_RETURN(ExecOutput out, execOnce(call, version));
  if (out.exit_code != 0) {
    Error e = delegateError(call.type, out);
    // GC and STATUS exist only from 1.1.0 on: no point in stepping down.
    if (e.code != ErrorCode::kIncompatibleVersion || call.command == "GC" ||
        call.command == "STATUS") {
      return e;
    }
    // The delegate does not speak this version: ask which it does, step down, remember.
    RDMANET_ASSIGN_OR_RETURN(auto theirs, delegateVersions(call));
    const auto common = highestCommon(theirs, call.version);
    if (!common || *common == version) return e;
    version = *common;
    RDMANET_ASSIGN_OR_RETURN(out, execOnce(call, version));
    if (out.exit_code != 0) return delegateError(call.type, out);
    rememberVersion(call.type, bin, call.version, version);
  }
  if (used_version != nullptr) *used_version = version;
  if (call.command != "ADD") return CniResult{};
  auto doc = parseJson(out.stdout_data, kDelegateLimits);
  if (!doc.ok()) {
    return makeError(ErrorCode::kDecodeFailure,
                     fmt::format("{} printed a result that is not JSON", call.type),
                     doc.error().msg);
  }
  auto res = parseResult(*doc);
  if (!res.ok()) return res.error().context(call.type + " result");
  return res;
}

}  // namespace rdmanet::cni
