#include "common/kube/curl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>
#include <type_traits>

namespace rdmanet::kube {

Result<CurlApi> loadLibcurl(const char* file) {
  // RTLD_LOCAL: libcurl's symbols serve only the table below, never other libraries' lookups.
  void* lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return makeError(ErrorCode::kInvalidEnv,
                     fmt::format("libcurl is needed to reach the API server (--api dra) and could "
                                 "not be loaded: {} (Debian package libcurl4)",
                                 why != nullptr ? why : file));
  }
  CurlApi api;
  std::string missing;
  auto resolve = [&](auto& fn, const char* name) {
    void* p = dlsym(lib, name);
    if (p == nullptr) {
      missing += missing.empty() ? name : fmt::format(", {}", name);
      return;
    }
    // POSIX guarantees that a dlsym result converts to the function's pointer type.
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
#define RDMANET_CURL_RESOLVE(member, name) resolve(api.member, #name);
  RDMANET_CURL_FUNCTIONS(RDMANET_CURL_RESOLVE)
#undef RDMANET_CURL_RESOLVE
  if (!missing.empty()) {
    dlclose(lib);
    return makeError(
        ErrorCode::kInvalidEnv,
        fmt::format("{} lacks {}: not the libcurl rdmanet was built for", file, missing));
  }
  // The process-wide set-up, before the first handle: curl_easy_init's implicit call is not
  // thread-safe in every build.
  const CURLcode rc = api.global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    return makeError(ErrorCode::kInvalidEnv,
                     fmt::format("curl_global_init: {}", api.easy_strerror(rc)));
  }
  return api;
}

Result<const CurlApi*> libcurl() {
  // A function-local static is initialised once, thread-safely.
  static const Result<CurlApi> loaded = loadLibcurl(kLibcurlSoname);
  if (!loaded.ok()) return loaded.error();
  return &loaded.value();
}

}  // namespace rdmanet::kube
