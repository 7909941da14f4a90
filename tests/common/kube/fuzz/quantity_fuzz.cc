// libFuzzer target over Kubernetes quantities (common/kube/quantity.h): the text of a
// consumedCapacity or capacity entry, as the API server or anyone writing a claim sends it.
// Invariants: no crash, no exception; an error is error 7; a value parsed is one that its
// canonical text gives back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/kube/quantity.h"

using namespace rdmanet::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto r = parseQuantity(text);
  if (!r.ok()) {
    if (r.error().code != rdmanet::ErrorCode::kInvalidConfig) __builtin_trap();
    return 0;
  }
  const auto again = parseQuantity(decimalQuantity(*r));
  if (!again.ok() || *again != *r) __builtin_trap();
  return 0;
}
