#pragma once
// readFile: the one way rdmanet reads a whole small file: state and records other processes
// write atomically (the CNI's attachment state, the DRA checkpoint and pod device records) and
// the configuration the operator gives (plugin config, kubeconfig, service-account token).
// Bounded: a file over `max_bytes` is an error, not a huge allocation. By default O_NOFOLLOW: a
// symlink planted where rdmanet keeps its own files is an error, never followed. Sysfs reads
// are not this: they go through Sysfs (common/base/sysfs.h), which has its own observer seam.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "common/base/result.h"

namespace rdmanet {

enum class Symlink {
  kRefuse,  // rdmanet's own files, in directories it owns
  // Files an operator or kubelet places: ConfigMap and projected service-account volumes
  // publish every file as a symlink into their "..data" directory.
  kFollow,
};

// The file's content; nullopt when it does not exist. Error 5 (kIoFailure) naming the path when
// it cannot be opened or read, is a symlink (kRefuse), or is larger than `max_bytes`.
Result<std::optional<std::string>> readFile(const std::filesystem::path& path, size_t max_bytes,
                                            Symlink symlink = Symlink::kRefuse);

}  // namespace rdmanet
