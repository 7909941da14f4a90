#include "deviceplugin/daemon/install_cni.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>

#include "common/base/fd.h"
#include "common/os/atomic_file.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

namespace {

Status copyInto(int in, int out, const fs::path& to) {
  std::array<char, 1 << 16> buf;
  while (true) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errnoError(ErrorCode::kIoFailure, errno, "read the CNI binary");
    if (n == 0) return okStatus();
    // write(2) may be partial; EINTR is retried.
    for (size_t done = 0; done < static_cast<size_t>(n);) {
      const ssize_t w = ::write(out, buf.data() + done, static_cast<size_t>(n) - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return errnoError(ErrorCode::kIoFailure, errno, "write " + to.string());
      done += static_cast<size_t>(w);
    }
  }
}

// Opens `src` and checks it is what we mean to install: a regular ELF file (a missing build
// artifact or a wrong COPY in the Dockerfile must fail the init container, not break every pod
// on the node later).
Result<Fd> openSource(const fs::path& src) {
  Fd in(::open(src.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) {
    int err = errno;
    return errnoError(err == ENOENT ? ErrorCode::kDeviceNotFound : ErrorCode::kIoFailure, err,
                      "open " + src.string());
  }
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) return errnoError(ErrorCode::kIoFailure, errno, "stat");
  if (!S_ISREG(st.st_mode)) {
    return makeError(ErrorCode::kInvalidConfig, src.string() + " is not a regular file");
  }
  char magic[4] = {};
  if (::pread(in.get(), magic, sizeof(magic), 0) != sizeof(magic) || std::string_view(magic, 4) !=
                                                                         "\x7f"
                                                                         "ELF") {
    return makeError(ErrorCode::kInvalidConfig, src.string() + " is not an ELF executable");
  }
  return in;
}

}  // namespace

Result<fs::path> executableDir(std::string_view argv0, const fs::path& self_exe) {
  std::error_code ec;
  fs::path exe = fs::read_symlink(self_exe, ec);
  if (!ec && exe.is_absolute()) return exe.parent_path();
  // No /proc: trust argv[0] only when absolute (a relative one depends on the caller's cwd and
  // PATH, which we cannot reconstruct reliably).
  fs::path a(argv0);
  if (a.is_absolute() && a.has_filename()) return a.lexically_normal().parent_path();
  return makeError(ErrorCode::kIoFailure,
                   "cannot find this executable's directory: " + self_exe.string() +
                       " is unreadable (" + ec.message() + ") and argv[0] \"" + std::string(argv0) +
                       "\" is not an absolute path");
}

Status installCniBinary(const fs::path& src, const fs::path& dest_dir) {
  struct stat dst {};
  if (::stat(dest_dir.c_str(), &dst) != 0) {
    return errnoError(ErrorCode::kInvalidConfig, errno, dest_dir.string());
  }
  if (!S_ISDIR(dst.st_mode)) {
    return makeError(ErrorCode::kInvalidConfig, dest_dir.string() + " is not a directory");
  }
  RDMANET_ASSIGN_OR_RETURN(Fd in, openSource(src));
  // Temp files of an earlier init container killed half-way (writeFileAtomic's, unheld).
  (void)sweepAtomicTemps(dest_dir);
  return writeFileAtomicWith(
      dest_dir / kCniBinaryName,
      [&](int out, const fs::path& tmp) { return copyInto(in.get(), out, tmp); },
      {.mode = 0755, .durable = true});
}

}  // namespace rdmanet::dp
