#include "common/os/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/base/fd.h"

namespace rdmanet {

Result<std::optional<std::string>> readFile(const std::filesystem::path& path, size_t max_bytes,
                                            Symlink symlink) {
  const int nofollow = symlink == Symlink::kRefuse ? O_NOFOLLOW : 0;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | nofollow));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return errnoError(ErrorCode::kIoFailure, errno, "cannot open " + path.string());
  }
  std::string data;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errnoError(ErrorCode::kIoFailure, errno, "cannot read " + path.string());
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > max_bytes) {
      return makeError(ErrorCode::kIoFailure, path.string() + " is too large");
    }
  }
  return std::optional<std::string>(std::move(data));
}

}  // namespace rdmanet
