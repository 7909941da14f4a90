#pragma once
// Telling Kubernetes API failures apart. Every KubeClient error carries code 104
// (kKubeApiFailure) and the HTTP status in Error::http_status (0: no answer at all).

#include <string>

#include "common/base/result.h"

namespace rdmanet::kube {

inline bool isApiError(const Error& e) { return e.code == ErrorCode::kKubeApiFailure; }
inline bool isNoAnswer(const Error& e) { return isApiError(e) && e.http_status == 0; }
inline bool isUnauthorized(const Error& e) { return e.http_status == 401; }
inline bool isForbidden(const Error& e) { return e.http_status == 403; }
inline bool isNotFound(const Error& e) { return e.http_status == 404; }
inline bool isConflict(const Error& e) { return e.http_status == 409; }
inline bool isInvalid(const Error& e) { return e.http_status == 422; }
inline bool isTooManyRequests(const Error& e) { return e.http_status == 429; }
inline bool isServerError(const Error& e) { return e.http_status >= 500; }

// What an operator should check for this failure, for the one log line the caller writes:
// 401 "the credentials were refused (expired or rotated token?)", 403 "RBAC does not allow
// it", 404 "the object does not exist", 409 "it changed meanwhile", 422 "the API server found
// it invalid", 429 "the API server is throttling", 5xx "the API server failed", no answer
// "the API server did not answer (down, unreachable or slow)"; "" for other errors.
std::string hint(const Error& e);

// The Error for an answered request: msg is "<METHOD> <path>: HTTP <status> <reason>: <message>"
// where reason and message come from the metav1.Status body when there is one; details holds
// the body (at most 1 KiB).
Error statusError(const std::string& method, const std::string& path, long status,
                  const std::string& body);

}  // namespace rdmanet::kube
