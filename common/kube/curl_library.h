#pragma once
// libcurl, loaded at run time (dlopen) rather than linked. Only `--api dra` talks to the API
// server, and a link-time dependency maps libcurl's whole tree (OpenSSL, GnuTLS, p11-kit,
// Kerberos, LDAP, libssh2, ...) into every rdmanet-device-plugin process: their constructors run
// and their pages count in the resident memory of the default device-plugin mode, which never
// uses them (about 5 MB of 23 MB at 2 x 64 VFs, bench/dp_bench.sh). systemd loads its optional
// libraries the same way.
//
// The functions are resolved by name from the soname that Debian's libcurl4 package installs,
// the library libcurl4-openssl-dev's headers (included here) describe, so their types hold.

#include <curl/curl.h>

#include "common/base/result.h"

namespace rdmanet::kube {

inline constexpr const char* kLibcurlSoname = "libcurl.so.4";

// The libcurl functions the REST client calls, once: X(member, libcurl's name).
#define RDMANET_CURL_FUNCTIONS(X)      \
  X(global_init, curl_global_init)     \
  X(easy_init, curl_easy_init)         \
  X(easy_cleanup, curl_easy_cleanup)   \
  X(easy_reset, curl_easy_reset)       \
  X(easy_setopt, curl_easy_setopt)     \
  X(easy_perform, curl_easy_perform)   \
  X(easy_getinfo, curl_easy_getinfo)   \
  X(easy_strerror, curl_easy_strerror) \
  X(easy_escape, curl_easy_escape)     \
  X(free, curl_free)                   \
  X(slist_append, curl_slist_append)   \
  X(slist_free_all, curl_slist_free_all)

// Pointers to them, with the types libcurl's header gives them.
struct CurlApi {
// (A member's name cannot be parenthesised, hence the NOLINT.)
#define RDMANET_CURL_MEMBER(member, name) \
  decltype(&::name) member = nullptr;  // NOLINT(bugprone-macro-parentheses)
  RDMANET_CURL_FUNCTIONS(RDMANET_CURL_MEMBER)
#undef RDMANET_CURL_MEMBER
};

// libcurl loaded, every function of CurlApi resolved and curl_global_init run: once per process
// (thread-safe; later calls return the same table, or the same error). The error names the
// library or the missing symbols with dlerror()'s reason. The library stays loaded for the
// process's life.
Result<const CurlApi*> libcurl();

// The same for a given file or soname, without the process-wide cache: for tests.
Result<CurlApi> loadLibcurl(const char* file);

}  // namespace rdmanet::kube
