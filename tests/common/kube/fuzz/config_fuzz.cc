// libFuzzer target over kubeconfig parsing (common/kube/config.h) and the YAML-to-JSON step
// under it (yaml_json.h): the input is a kubeconfig file's text, YAML or JSON (seeds: what
// kubectl and kubeadm write). Invariants: no crash, no exception, bounded time and memory (a
// kubeconfig is a few KiB; -timeout and -rss_limit_mb catch expansion).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/kube/config.h"
#include "common/kube/yaml_json.h"

using namespace rdmanet::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)yamlToJson(text);
  (void)parseKubeconfig(text, "/etc/kubernetes");
  (void)parseKubeconfig(text, "/etc/kubernetes", "kubernetes-admin@kubernetes");
  (void)decodeBase64(text);
  return 0;
}
