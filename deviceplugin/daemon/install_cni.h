#pragma once
// `rdmanet-device-plugin --install-cni DIR`: the Helm chart's init container installs the CNI
// binary on the host with it (the runtime image has no shell, so no `cp`).
//
// The runtime (containerd, CRI-O) may exec DIR/rdmanet at any moment, including while an
// upgrade replaces it, so the new binary is written with writeFileAtomic (common/os/atomic_file.h:
// a held temp file DIR/rdmanet.rdmanet-tmp.<pid>, fsynced, made 0755 and renamed over
// DIR/rdmanet; the directory is fsynced so the rename survives a crash). A runtime sees the old
// or the new binary, never a partial one. On failure the temp file is removed and DIR/rdmanet is
// left as it was; temp files of an earlier run that was killed are swept first.

#include <filesystem>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet::dp {

inline constexpr std::string_view kCniBinaryName = "rdmanet";

// The directory holding the running executable: /proc/self/exe's directory, or, where /proc is
// not mounted (a chroot, some minimal sandboxes), that of `argv0` when it is an absolute path.
// Error 5 when neither is available. `self_exe` is the link to read (tests point it elsewhere).
Result<std::filesystem::path> executableDir(
    std::string_view argv0, const std::filesystem::path& self_exe = "/proc/self/exe");

// Copies `src` (a regular ELF file, as the CNI binary must be) to `dest_dir`/rdmanet as
// described above. `dest_dir` must be an existing directory. Errors: 100 when `src` is missing,
// 7 when `src` is not a regular ELF file or `dest_dir` is not a directory, 5 on I/O failure.
// Each message names the path.
Status installCniBinary(const std::filesystem::path& src, const std::filesystem::path& dest_dir);

}  // namespace rdmanet::dp
