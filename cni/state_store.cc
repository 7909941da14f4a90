#include "cni/state_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "cni/json_util.h"

namespace fs = std::filesystem;

namespace rdmanet::cni {
namespace {

Error ioError(int err, const std::string& what) {
  return errnoError(ErrorCode::kIoFailure, err, what);
}

Status mkdir0700(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return okStatus();
  if (errno != EEXIST) return ioError(errno, fmt::format("cannot create {}", dir.string()));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ioError(errno, "cannot stat " + dir.string());
  if (!S_ISDIR(st.st_mode)) {
    return makeError(ErrorCode::kIoFailure, fmt::format("{} is not a directory", dir.string()));
  }
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) {
    return ioError(errno, "cannot chmod 0700 " + dir.string());
  }
  return okStatus();
}

Result<std::optional<std::string>> readSmallFile(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return ioError(errno, "cannot open " + p.string());
  }
  std::string data;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return ioError(e, "cannot read " + p.string());
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > (4u << 20)) {
      ::close(fd);
      return makeError(ErrorCode::kIoFailure, p.string() + " is too large");
    }
  }
  ::close(fd);
  return std::optional<std::string>(std::move(data));
}

}  // namespace

Status writeFileAtomic(const fs::path& path, const std::string& data, mode_t mode) {
  const fs::path tmp = path.string() + fmt::format(".tmp.{}", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return ioError(errno, "cannot create " + tmp.string());
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return ioError(e, "cannot write " + tmp.string());
    }
    off += static_cast<size_t>(n);
  }
  // fchmod: an old temp file may have had other bits. No fsync: the rename makes the update
  // atomic for readers and survives a crash of the plugin; what a power loss could lose (state
  // of attachments whose pods, netns and VF settings the reboot wipes too) is not worth a disk
  // flush on every pod start.
  if (::fchmod(fd, mode) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return ioError(e, "cannot chmod " + tmp.string());
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return ioError(e, "cannot rename to " + path.string());
  }
  return okStatus();
}

Status StateStore::ensure() const {
  if (ensured_) return okStatus();
  // Create parents as needed (e.g. /var/lib/cni), then our own dirs with 0700.
  std::error_code ec;
  if (dir_.has_parent_path()) fs::create_directories(dir_.parent_path(), ec);
  RDMANET_RETURN_IF_ERROR(mkdir0700(dir_));
  for (const char* sub : {"locks", "vlan", "ipam"}) RDMANET_RETURN_IF_ERROR(mkdir0700(dir_ / sub));
  ensured_ = true;
  return okStatus();
}

fs::path StateStore::fileFor(const std::string& container_id, const std::string& ifname) const {
  return dir_ / fmt::format("{}_{}.json", container_id, ifname);
}

fs::path StateStore::lockPath(const std::string& name) const {
  return dir_ / "locks" / (name + ".lock");
}

Status StateStore::save(const AttachmentState& st) const {
  RDMANET_RETURN_IF_ERROR(ensure());
  return writeFileAtomic(fileFor(st.container_id, st.ifname), dumpJson(st.toJson()));
}

Result<std::optional<AttachmentState>> StateStore::load(const std::string& container_id,
                                                        const std::string& ifname) const {
  RDMANET_ASSIGN_OR_RETURN(auto text, readSmallFile(fileFor(container_id, ifname)));
  if (!text) return std::optional<AttachmentState>();
  auto doc = parseJson(*text);
  if (!doc.ok())
    return makeError(ErrorCode::kIoFailure, "state file is corrupt", doc.error().details);
  RDMANET_ASSIGN_OR_RETURN(auto st, AttachmentState::fromJson(*doc));
  return std::optional<AttachmentState>(std::move(st));
}

Status StateStore::remove(const std::string& container_id, const std::string& ifname) const {
  const fs::path p = fileFor(container_id, ifname);
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    return ioError(errno, "cannot remove " + p.string());
  return okStatus();
}

std::vector<AttachmentState> StateStore::list() const {
  std::vector<AttachmentState> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".json" || !it->is_regular_file(ec)) continue;
    auto text = readSmallFile(p);
    if (!text.ok() || !text->has_value()) continue;
    auto doc = parseJson(**text);
    if (!doc.ok()) continue;
    auto st = AttachmentState::fromJson(*doc);
    if (st.ok()) out.push_back(std::move(st).value());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.container_id, a.ifname) < std::tie(b.container_id, b.ifname);
  });
  return out;
}

Result<std::optional<json>> StateStore::readDoc(const std::string& rel) const {
  RDMANET_ASSIGN_OR_RETURN(auto text, readSmallFile(dir_ / rel));
  if (!text) return std::optional<json>();
  auto doc = parseJson(*text);
  if (!doc.ok()) return std::optional<json>();  // a corrupt cache is as good as none
  return std::optional<json>(std::move(doc).value());
}

Status StateStore::writeDoc(const std::string& rel, const json& doc) const {
  RDMANET_RETURN_IF_ERROR(ensure());
  return writeFileAtomic(dir_ / rel, dumpJson(doc));
}

Status StateStore::removeDoc(const std::string& rel) const {
  const fs::path p = dir_ / rel;
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    return ioError(errno, "cannot remove " + p.string());
  return okStatus();
}

}  // namespace rdmanet::cni
