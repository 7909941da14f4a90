// libFuzzer target over the API's error bodies (common/kube/api_error.h): the input is what
// came back with a failed request, a metav1.Status from the API server or anything a proxy
// sends. Invariants: no crash, no exception; the error keeps its status and at most 1 KiB of body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/kube/api_error.h"

using namespace rdmanet::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  for (long status : {409L, 503L}) {
    const rdmanet::Error e =
        statusError("PUT", "/apis/resource.k8s.io/v1/resourceslices/x", status, body);
    if (e.http_status != status || e.details.size() > 1024) __builtin_trap();
    (void)hint(e);
  }
  return 0;
}
