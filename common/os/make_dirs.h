#pragma once
// makeDirs: a directory and every missing ancestor, for the host directories rdmanet fills that
// nothing else creates after a boot (they sit on tmpfs, /var/run): the CNI's pod-info dirs at
// ADD, and the same dirs when a DRA claim's CDI spec mounts them before any ADD ran.

#include <sys/types.h>

#include <filesystem>

#include "common/base/result.h"

namespace rdmanet {

// Creates `dir` and its missing ancestors with `mode` (less the umask). Error 5 (kIoFailure)
// when one cannot be created or `dir` is not a directory (a symlink to one is refused too).
Status makeDirs(const std::filesystem::path& dir, mode_t mode = 0755);

}  // namespace rdmanet
