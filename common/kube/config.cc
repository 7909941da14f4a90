#include "common/kube/config.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdlib>

#include "common/json/json_access.h"
#include "common/kube/yaml_json.h"
#include "common/os/read_file.h"

namespace rdmanet::kube {
namespace {

// Embedded certificates make a kubeconfig a few KiB; the bound only keeps a wrong path (a log,
// a disk image) from being read whole.
constexpr size_t kMaxKubeconfigBytes = 4 << 20;

using json = nlohmann::json;

std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The string at obj[key], "" when absent; error 7 naming "<where>.<key>" when present but not a
// string.
Result<std::string> str(const json& obj, const char* key, const std::string& where) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return std::string();
  return asString(*v, fmt::format("{}.{}", where, key));
}

// The `inner` object of the named entry of a kubeconfig list (clusters/users/contexts).
Result<json> namedEntry(const json& root, const char* list, const char* inner,
                        const std::string& name) {
  if (root.contains(list) && root[list].is_array()) {
    for (const auto& e : root[list]) {
      if (e.is_object() && e.value("name", json()).is_string() && e["name"] == name) {
        return e.value(inner, json::object());
      }
    }
  }
  return makeError(ErrorCode::kInvalidConfig,
                   fmt::format("kubeconfig: no entry named \"{}\" in {}", name, list));
}

std::string resolvePath(const std::string& p, const std::filesystem::path& base) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (base / p).lexically_normal().string();
}

Result<std::string> decodedField(const json& obj, const char* key, const std::string& where) {
  RDMANET_ASSIGN_OR_RETURN(std::string b64, str(obj, key, where));
  if (b64.empty()) return b64;
  auto out = decodeBase64(b64);
  if (!out) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{}.{} is not valid base64", where, key));
  }
  return *out;
}

}  // namespace

InClusterEnv inClusterEnvFromProcess() {
  InClusterEnv env;
  env.service_host = envOr("KUBERNETES_SERVICE_HOST");
  env.service_port = envOr("KUBERNETES_SERVICE_PORT");
  return env;
}

Result<KubeConfig> inClusterConfig(const InClusterEnv& env) {
  if (env.service_host.empty() || env.service_port.empty()) {
    return makeError(ErrorCode::kInvalidEnv,
                     "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must "
                     "be set (or pass --kubeconfig)");
  }
  int port = 0;
  const auto& p = env.service_port;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || end != p.data() + p.size() || port <= 0 || port > 65535) {
    return makeError(ErrorCode::kInvalidEnv,
                     fmt::format("KUBERNETES_SERVICE_PORT \"{}\" is not a port number", p));
  }
  KubeConfig c;
  const bool v6 = env.service_host.find(':') != std::string::npos;
  c.server = v6 ? fmt::format("https://[{}]:{}", env.service_host, port)
                : fmt::format("https://{}:{}", env.service_host, port);
  for (const char* f : {"ca.crt", "token"}) {
    std::error_code fec;
    if (!std::filesystem::exists(env.sa_dir / f, fec)) {
      return makeError(ErrorCode::kDeviceNotFound, fmt::format("service account file {} is missing",
                                                               (env.sa_dir / f).string()));
    }
  }
  c.ca_file = (env.sa_dir / "ca.crt").string();
  c.token_file = (env.sa_dir / "token").string();
  return c;
}

Result<KubeConfig> loadKubeconfig(const std::filesystem::path& file, const std::string& context) {
  // A kubeconfig may come from a Secret or ConfigMap volume: a symlink into its "..data".
  auto text = readFile(file, kMaxKubeconfigBytes, Symlink::kFollow);
  if (!text.ok() || !*text) {
    return makeError(ErrorCode::kIoFailure, fmt::format("cannot read kubeconfig {}", file.string()),
                     text.ok() ? "no such file" : text.error().msg);
  }
  auto r = parseKubeconfig(**text, file.parent_path(), context);
  if (!r.ok()) return r.error().context(file.string());
  return r;
}

Result<KubeConfig> parseKubeconfig(const std::string& text, const std::filesystem::path& base_dir,
                                   const std::string& context) {
  RDMANET_ASSIGN_OR_RETURN(json root, yamlToJson(text));
  if (!root.is_object()) return makeError(ErrorCode::kInvalidConfig, "kubeconfig is not a map");
  RDMANET_ASSIGN_OR_RETURN(std::string current, str(root, "current-context", "kubeconfig"));
  const std::string ctx_name = context.empty() ? current : context;
  if (ctx_name.empty()) {
    return makeError(ErrorCode::kInvalidConfig, "kubeconfig: current-context is not set");
  }
  RDMANET_ASSIGN_OR_RETURN(json ctx, namedEntry(root, "contexts", "context", ctx_name));
  const std::string cwhere = fmt::format("contexts[{}].context", ctx_name);
  RDMANET_ASSIGN_OR_RETURN(std::string cluster_name, str(ctx, "cluster", cwhere));
  RDMANET_ASSIGN_OR_RETURN(std::string user_name, str(ctx, "user", cwhere));
  RDMANET_ASSIGN_OR_RETURN(json cluster, namedEntry(root, "clusters", "cluster", cluster_name));
  const std::string kwhere = fmt::format("clusters[{}].cluster", cluster_name);

  KubeConfig c;
  RDMANET_ASSIGN_OR_RETURN(c.server, str(cluster, "server", kwhere));
  if (c.server.empty()) {
    return makeError(ErrorCode::kInvalidConfig, fmt::format("{}.server is not set", kwhere));
  }
  if (!c.server.starts_with("https://") && !c.server.starts_with("http://")) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{}.server \"{}\" is not an http(s) URL", kwhere, c.server));
  }
  while (c.server.ends_with('/')) c.server.pop_back();
  RDMANET_ASSIGN_OR_RETURN(std::string ca, str(cluster, "certificate-authority", kwhere));
  c.ca_file = resolvePath(ca, base_dir);
  RDMANET_ASSIGN_OR_RETURN(c.ca_data, decodedField(cluster, "certificate-authority-data", kwhere));
  RDMANET_ASSIGN_OR_RETURN(std::string insecure, str(cluster, "insecure-skip-tls-verify", kwhere));
  c.insecure_skip_tls_verify = insecure == "true";

  if (user_name.empty()) return c;  // no credentials: anonymous
  RDMANET_ASSIGN_OR_RETURN(json user, namedEntry(root, "users", "user", user_name));
  const std::string uwhere = fmt::format("users[{}].user", user_name);
  for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
    if (user.is_object() && user.contains(unsupported)) {
      return makeError(ErrorCode::kUnsupportedField,
                       fmt::format("{}.{} is not supported (use a token, a tokenFile or a client "
                                   "certificate)",
                                   uwhere, unsupported));
    }
  }
  RDMANET_ASSIGN_OR_RETURN(c.token, str(user, "token", uwhere));
  RDMANET_ASSIGN_OR_RETURN(std::string token_file, str(user, "tokenFile", uwhere));
  c.token_file = resolvePath(token_file, base_dir);
  RDMANET_ASSIGN_OR_RETURN(std::string cert, str(user, "client-certificate", uwhere));
  c.client_cert_file = resolvePath(cert, base_dir);
  RDMANET_ASSIGN_OR_RETURN(c.client_cert_data,
                           decodedField(user, "client-certificate-data", uwhere));
  RDMANET_ASSIGN_OR_RETURN(std::string key, str(user, "client-key", uwhere));
  c.client_key_file = resolvePath(key, base_dir);
  RDMANET_ASSIGN_OR_RETURN(c.client_key_data, decodedField(user, "client-key-data", uwhere));
  const bool has_cert = !c.client_cert_file.empty() || !c.client_cert_data.empty();
  const bool has_key = !c.client_key_file.empty() || !c.client_key_data.empty();
  if (has_cert != has_key) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{}: a client certificate needs its key and vice versa", uwhere));
  }
  return c;
}

std::optional<std::string> decodeBase64(const std::string& text) {
  std::array<int, 256> val{};
  val.fill(-1);
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < alphabet.size(); ++i) val[static_cast<unsigned char>(alphabet[i])] = i;
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  bool padding = false;
  for (unsigned char ch : text) {
    if (ch == '\n' || ch == '\r' || ch == ' ' || ch == '\t') continue;
    if (ch == '=') {
      padding = true;
      continue;
    }
    if (padding || val[ch] < 0) return std::nullopt;  // data after padding, or a bad character
    buf = (buf << 6) | static_cast<unsigned>(val[ch]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  if (bits >= 6) return std::nullopt;  // a lone trailing character encodes no whole byte
  return out;
}

}  // namespace rdmanet::kube
