#include "common/kube/curl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <type_traits>

namespace rdmanet::kube {

Result<CurlApi> loadLibcurl(const char* file) {
  // Debian's libcurl4 also links GnuTLS (through librtmp and libldap, for protocols rdmanet never
  // speaks), whose load-time constructor initialises it in full: ~0.6 MB of resident memory in
  // a daemon that uses OpenSSL through libcurl. GnuTLS's documented GNUTLS_NO_IMPLICIT_INIT=1
  // skips that constructor; a library that does use GnuTLS calls gnutls_global_init itself. An
  // operator's own setting is kept. This runs at start-up, before the daemon starts threads
  // (setenv is not safe beside a concurrent getenv).
  setenv("GNUTLS_NO_IMPLICIT_INIT", "1", /*overwrite=*/0);
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
