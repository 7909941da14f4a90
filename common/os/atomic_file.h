#pragma once
// writeFileAtomic: the one way rdmanet replaces a file's content, so that a reader (kubelet,
// Multus, a container runtime exec'ing the CNI binary, the next doctor run) sees the old file
// or the new one whole, never a partial one, and a crash leaves nothing that lasts.
//
// The content goes to a temp file beside the target, "<target>.rdmanet-tmp.<tid>" (the calling
// thread's id: the PID in a single-threaded program such as the CNI plugin), created with
// O_NOFOLLOW (a planted symlink is removed, never followed) and held under an exclusive flock(2)
// for its whole life; then fchmod to the wanted mode (the umask does not decide), optionally
// fsync, and rename(2) over the target while still held. On failure the temp file is removed.
//
// A writer killed half-way leaves its temp file behind, unheld: the kernel drops the flock
// with the process however it dies. sweepAtomicTemps() removes exactly those (the marker
// names only our files, even in a shared directory; the flock, not the id, tells a live writer
// from a dead one, which also works across PID namespaces). Threads of one process write the
// same target concurrently without meeting: each has its own temp name. The CNI plugin's state
// store sweeps its directories with it; so does --install-cni in the host's CNI bin dir.

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet {

struct AtomicWriteOptions {
  mode_t mode = 0600;
  // fsync the file before the rename and the directory after it, so the new content survives
  // a power loss. Off for files under /run (tmpfs) that are rewritten at start-up anyway.
  bool durable = true;
};

// Replaces `path` with `content` as described above. The directory must exist. Error 5 naming
// the path on any failure; `path` is then left as it was.
Status writeFileAtomic(const std::filesystem::path& path, std::string_view content,
                       const AtomicWriteOptions& options = {});

// The same, for content produced by `fill`, which writes it to the open temp file `fd` (a
// large file copied in chunks). An error from `fill` is returned as is.
using AtomicFill = std::function<Status(int fd, const std::filesystem::path& temp)>;
Status writeFileAtomicWith(const std::filesystem::path& path, const AtomicFill& fill,
                           const AtomicWriteOptions& options = {});

// "<path>.rdmanet-tmp.<thread id of the caller>".
std::filesystem::path atomicTempPath(const std::filesystem::path& path);
// Whether a file name is one of writeFileAtomic's temp files (any id).
bool isAtomicTempName(std::string_view filename);

// Removes every temp file in `dir` (not recursive) that no live writer holds; returns how many.
// A missing directory has none. Never fails: what cannot be removed now is left for the next.
int sweepAtomicTemps(const std::filesystem::path& dir);

}  // namespace rdmanet
