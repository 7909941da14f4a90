#include "common/os/make_dirs.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rdmanet {

namespace fs = std::filesystem;

Status makeDirs(const fs::path& dir, mode_t mode) {
  std::vector<fs::path> chain;
  for (fs::path d = dir; d.has_relative_path(); d = d.parent_path()) chain.push_back(d);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (::mkdir(it->c_str(), mode) != 0 && errno != EEXIST) {
      return makeError(ErrorCode::kIoFailure,
                       fmt::format("cannot create {}: {}", it->string(), std::strerror(errno)));
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return makeError(ErrorCode::kIoFailure, fmt::format("{} is not a directory", dir.string()));
  }
  return okStatus();
}

}  // namespace rdmanet
