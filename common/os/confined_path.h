#pragma once
// Confined paths: a file or directory that a less trusted party names (a NetworkAttachment-
// Definition's logFile, podInfoDir or runtimeConfig.CNIDeviceInfoFile), kept beneath a root the
// node's admin chose (/var/log, rdmanet's run dir, Multus's device-info dir).
//
// The root itself is the admin's path and is opened as given (symlinks followed: /var/run is one
// on most distributions). Below it, the named path must be lexically beneath the root (absolute,
// no "." or ".." or empty component), and every component is opened with openat(2) and
// O_NOFOLLOW from the one before: a symlink anywhere below the root is refused, never followed,
// and swapping a component for a symlink after the check changes nothing, since the walk holds
// each directory open. Files are then reached through the held directory: "/proc/self/fd/<n>/..."
// for functions that take a path (writeFileAtomic), or openat(2) on the fd.

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "common/base/fd.h"
#include "common/base/result.h"

namespace rdmanet {

// The directory holding a confined file, held open, and the file's name in it.
struct ConfinedFile {
  Fd dir;
  std::string name;
  // "/proc/self/fd/<dir>/<name>": the same file by path, resolved through the held directory.
  std::string viaFd() const;
};

// Whether `path` is lexically beneath `root` (or is `root` itself when `allow_root`): both
// absolute, `path` without empty, "." or ".." components. A pure string check.
bool isBeneath(const std::filesystem::path& root, const std::string& path, bool allow_root = false);

// Opens the directory `path` beneath `root` component by component (O_NOFOLLOW, O_DIRECTORY).
// With `create`, missing components are made with `mode` (less the umask), the root with its
// missing ancestors too. Error 7 (kInvalidConfig) when `path` is not beneath `root`; error 5
// (kIoFailure) naming the path when a component is a symlink or not a directory, or is missing
// (without `create`) or cannot be made.
Result<Fd> openConfinedDir(const std::filesystem::path& root, const std::string& path, bool create,
                           mode_t mode = 0755);

// Resolves the file `path` beneath `root`: its parent directory as openConfinedDir does it (the
// root itself may be the parent) and its name, which must not be empty. Errors as there.
Result<ConfinedFile> resolveConfinedFile(const std::filesystem::path& root, const std::string& path,
                                         bool create_dirs, mode_t dir_mode = 0755);

// Opens `name` in `dir` with `flags` plus O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC (a symlink is
// refused, a FIFO does not block the open) and refuses anything but a regular file (FIFOs,
// sockets, devices, directories). Error 5 naming `what` on failure; ENOENT without O_CREAT is
// error 5 too.
Result<Fd> openRegularAt(int dir, const std::string& name, int flags, mode_t mode,
                         const std::string& what);

}  // namespace rdmanet
