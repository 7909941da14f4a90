#pragma once
// readFile: a whole small file, for state and records other processes write atomically (the
// CNI's attachment state, the DRA pod device records). O_NOFOLLOW: a planted symlink is an
// error, never followed; bounded: a file over `max_bytes` is an error, not a huge allocation.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "common/base/result.h"

namespace rdmanet {

// The file's content; nullopt when it does not exist. Error 5 (kIoFailure) when it cannot be
// opened or read, is a symlink, or is larger than `max_bytes`.
Result<std::optional<std::string>> readFile(const std::filesystem::path& path, size_t max_bytes);

}  // namespace rdmanet
