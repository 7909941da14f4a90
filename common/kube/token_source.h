#pragma once
// The bearer token of a KubeConfig: fixed, or read from a file and re-read whenever the file
// changes (kubelet rotates projected service-account tokens by swapping a symlink, so the
// inode, size or mtime seen through the path changes).

#include <filesystem>
#include <string>

#include "common/base/result.h"

namespace rdmanet::kube {

class TokenSource {
 public:
  // `file` wins over `fixed` when both are set; neither means no Authorization header.
  TokenSource(std::string fixed, std::filesystem::path file);

  // The current token ("" when none is configured). Re-reads the file when it changed since the
  // last read, or always when `force` is set. Error 5 when the file cannot be read; error 7 when
  // it is empty.
  Result<std::string> token(bool force = false);

 private:
  std::string fixed_;
  std::filesystem::path file_;
  std::string cached_;
  // What the file looked like when cached_ was read.
  unsigned long long ino_ = 0, size_ = 0;
  long long mtime_ns_ = -1;
};

}  // namespace rdmanet::kube
