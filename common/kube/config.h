#pragma once
// Where the Kubernetes API server is and how to authenticate to it: in-cluster (the pod's service
// account) or a kubeconfig file, in the forms kubectl accepts.
//
// Nothing here logs or talks to the network; every function returns a plain KubeConfig or an
// Error that names the file and key at fault.

#include <filesystem>
#include <optional>
#include <string>

#include "common/base/result.h"

namespace rdmanet::kube {

struct KubeConfig {
  std::string server{};  // "https://10.96.0.1:443" (no trailing slash)
  // Server trust: a PEM file or PEM bytes (kubeconfig certificate-authority-data, decoded).
  // Neither set means the system trust store.
  std::string ca_file{};
  std::string ca_data{};
  bool insecure_skip_tls_verify = false;
  // Bearer authentication: a fixed token, or a file re-read when it changes (service-account
  // tokens are rotated by kubelet). token_file wins when both are set.
  std::string token{};
  std::string token_file{};
  // Client-certificate authentication (PEM), each as a file or as bytes.
  std::string client_cert_file{};
  std::string client_cert_data{};
  std::string client_key_file{};
  std::string client_key_data{};
};

// In-cluster discovery. The environment is passed in, not read, so tests can point it anywhere.
struct InClusterEnv {
  std::string service_host{};  // $KUBERNETES_SERVICE_HOST
  std::string service_port{};  // $KUBERNETES_SERVICE_PORT
  // The directory holding ca.crt and token; /var/run/secrets/kubernetes.io/serviceaccount in a
  // pod.
  std::filesystem::path sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
};

// The InClusterEnv of this process (reads the two environment variables).
InClusterEnv inClusterEnvFromProcess();

// https://<host>:<port> with <sa_dir>/ca.crt and <sa_dir>/token (as token_file, so rotation is
// followed). Errors: 4 when a variable is unset or the port is not a number, 100 when ca.crt or
// token is missing. An IPv6 host is bracketed.
Result<KubeConfig> inClusterConfig(const InClusterEnv& env);

// Parses a kubeconfig (YAML or JSON): the current-context (or `context` when given) picks the
// cluster and user. Supported: server, certificate-authority(-data), insecure-skip-tls-verify,
// token, tokenFile, client-certificate(-data), client-key(-data). Relative file paths are
// resolved against the kubeconfig's directory, as kubectl does. Errors: 5 when the file cannot
// be read, 6 when it does not parse, 7 for a missing context/cluster/user, bad base64, or an
// auth method we do not implement (exec, auth-provider, username/password), naming the key.
Result<KubeConfig> loadKubeconfig(const std::filesystem::path& file,
                                  const std::string& context = {});
// The same, from text already read; `base_dir` resolves relative paths.
Result<KubeConfig> parseKubeconfig(const std::string& text, const std::filesystem::path& base_dir,
                                   const std::string& context = {});

// Standard base64 (with or without padding, newlines ignored). nullopt on a bad character.
std::optional<std::string> decodeBase64(const std::string& text);

}  // namespace rdmanet::kube
