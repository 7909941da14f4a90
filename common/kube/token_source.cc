#include "common/kube/token_source.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "common/os/read_file.h"

namespace rdmanet::kube {

namespace {
// A service-account JWT is about 1 KiB; kubelet's never reach this.
constexpr size_t kMaxTokenBytes = 64 << 10;
}  // namespace

TokenSource::TokenSource(std::string fixed, std::filesystem::path file)
    : fixed_(std::move(fixed)), file_(std::move(file)) {}

Result<std::string> TokenSource::token(bool force) {
  if (file_.empty()) return fixed_;
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) {
    return errnoError(ErrorCode::kIoFailure, errno,
                      fmt::format("cannot read token file {}", file_.string()));
  }
  const long long mtime_ns =
      static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  if (!force && mtime_ns == mtime_ns_ && st.st_ino == ino_ &&
      static_cast<unsigned long long>(st.st_size) == size_) {
    return cached_;
  }
  // A projected service-account token is a symlink into its volume's "..data" directory.
  auto text = readFile(file_, kMaxTokenBytes, Symlink::kFollow);
  if (!text.ok() || !*text) {
    return makeError(ErrorCode::kIoFailure,
                     fmt::format("cannot read token file {}", file_.string()),
                     text.ok() ? "no such file" : text.error().msg);
  }
  std::string t = std::move(**text);
  // Token files written by hand often end in a newline; kubelet's do not.
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (t.empty()) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("token file {} is empty", file_.string()));
  }
  cached_ = std::move(t);
  ino_ = st.st_ino;
  size_ = static_cast<unsigned long long>(st.st_size);
  mtime_ns_ = mtime_ns;
  return cached_;
}

}  // namespace rdmanet::kube
