#pragma once
// Held files: files that exist only while a process holds them under an exclusive flock(2),
// and the sweep that removes the ones whose holder died.
//
// rdmanet's transient files (the temp file of an atomic write, atomic_file.h; the CNI's device
// lock files) are held by the process that made them for as long as they are meant to exist, and
// that process removes them when it is done. The kernel drops the flock when the process dies,
// however it dies (SIGKILL, OOM), so a transient file that nobody holds is a leftover that any
// later process may remove: sweepUnheld() does. flock works across PID namespaces, where a PID in
// the file name would not tell a live holder from a dead one.
//
// The one race, a sweeper removing a file between its creator's open() and flock(), is closed on
// the creator's side: after taking the flock, holdFile checks that the path still names the inode
// it locked, and starts again otherwise.

#include <filesystem>
#include <functional>
#include <string_view>

#include "common/base/fd.h"
#include "common/base/result.h"

namespace rdmanet {

enum class HoldMode {
  kCreateWait,   // create if absent, wait for the flock (a temp file: held only briefly)
  kCreateTry,    // create if absent, do not wait (a lock: callers poll with a deadline)
  kExistingTry,  // only an existing file, do not wait (the sweep)
};

// The outcome of one attempt: `fd` holds the flock on the inode `path` names. Otherwise `busy`
// (another open file description holds it: kCreateTry, kExistingTry) or `gone` (kExistingTry and
// no such regular file).
struct Hold {
  Fd fd{};
  bool busy = false;
  bool gone = false;
  bool held() const { return fd.get() >= 0; }
};

// Opens `path` (O_NOFOLLOW, mode 0600 when created) and takes its flock as `mode` says. When
// creating, a symlink, FIFO or socket planted at `path` is removed, never followed or opened.
// Error 5 naming the path when it cannot be opened or locked, or keeps being replaced.
Result<Hold> holdFile(const std::filesystem::path& path, HoldMode mode);

// Removes every file in `dir` (not recursive) whose name `is_ours` accepts and that no process
// holds; returns how many. A missing directory has none. Never fails: what cannot be removed now
// is left for the next sweep.
int sweepUnheld(const std::filesystem::path& dir,
                const std::function<bool(std::string_view name)>& is_ours);

}  // namespace rdmanet
