#pragma once
// JSON text that never throws. nlohmann's plain dump() throws type_error 316 on a string that is
// not valid UTF-8, and such strings reach rdmanet's documents from outside: a netdev or RDMA name
// a pod with NET_ADMIN chose, a sysfs attribute, a field of a netconf or of an API object. Every
// JSON text rdmanet writes (files, API requests, reports, stdout) goes through this helper, which
// replaces each invalid byte sequence with U+FFFD instead: a document with one odd character is
// better than a thread or a process brought down by it.

#include <nlohmann/json.hpp>
#include <string>

namespace rdmanet {

// The text of `j`: compact with indent -1 (the default), else pretty with that many spaces.
// Non-ASCII characters are written as they are (UTF-8), invalid UTF-8 as U+FFFD. Never throws.
std::string dumpJson(const nlohmann::json& j, int indent = -1);

}  // namespace rdmanet
