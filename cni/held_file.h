#pragma once
// Files that exist only while a process holds them, and the sweep that removes the ones whose
// holder died.
//
// The plugin's transient files (the temp file of an atomic write, a device lock file) are held
// under an exclusive flock(2) by the process that made them, for as long as they are meant to
// exist, and that process removes them when it is done. The kernel drops the flock when the
// process dies, however it dies (SIGKILL, OOM, a node crash loses the files' directory under
// /run anyway), so a transient file that nobody holds is a leftover, and any later invocation
// may remove it: sweepUnheld() does, in the state, lock and device-info directories. flock
// works across PID namespaces, where a PID in the file name would not tell a live writer from
// a dead one.
//
// The one race, a sweeper removing a file between its creator's open() and flock(), is closed
// on the creator's side: after taking the flock it checks that the path still names the inode
// it locked, and starts again otherwise (holdFile).

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "common/base/result.h"

namespace rdmanet::cni {

enum class HoldMode {
  kCreateWait,   // create if absent, wait for the flock (a temp file: held only briefly)
  kCreateTry,    // create if absent, do not wait (a device lock: callers poll with a deadline)
  kExistingTry,  // only an existing file, do not wait (the sweep)
};

// The outcome of one attempt: fd >= 0 holds the flock on the inode `path` names. Otherwise
// busy (another process holds it), gone (kExistingTry and no such file) or, with an Error, a
// failure to open or lock (error 5).
struct Hold {
  int fd = -1;
  bool busy = false;
  bool gone = false;
};
Result<Hold> holdFile(const std::filesystem::path& path, HoldMode mode);

// Writes `data` to `path` atomically with `mode`, through the project's one atomic writer
// (common/os/atomic_file.h: a flock-held temp file beside it, tempPathFor(path), renamed over
// `path`), without fsync. A reader sees the old or the new file whole. Error 5 on failure.
Status writeFileAtomic(const std::filesystem::path& path, const std::string& data,
                       mode_t mode = 0600);
// "<dir>/<name>.rdmanet-tmp.<pid>": the name is ours alone even in a shared directory (the
// device-info directory), so a sweep there never touches another program's files.
std::filesystem::path tempPathFor(const std::filesystem::path& path);

// What sweepUnheld removes from a directory.
enum class Transient {
  kTemp,  // writeFileAtomic's temp files
  kLock,  // device lock files (*.lock)
};
// Removes every file of that kind in `dir` (not recursive) that no process holds. Returns how
// many; a missing directory has none. Never fails: what cannot be removed now is left for the
// next sweep.
int sweepUnheld(const std::filesystem::path& dir, Transient kind);

}  // namespace rdmanet::cni
