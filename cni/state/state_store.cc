#include "cni/state/state_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "cni/conf/json_util.h"
#include "cni/conf/limits.h"
#include "cni/state/device_lock.h"
#include "common/os/held_file.h"
#include "common/os/read_file.h"

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
  return readFile(p, kMaxStateBytes);
}

}  // namespace

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

int StateStore::sweepStale() const {
  int n = sweepAtomicTemps(dir_);
  for (const char* sub : {"vlan", "ipam"}) n += sweepAtomicTemps(dir_ / sub);
  return n + sweepUnheld(dir_ / "locks", isLockFileName);
}

Status StateStore::save(const AttachmentState& st) const {
  RDMANET_RETURN_IF_ERROR(ensure());
  const std::string text = dumpJson(st.toJson());
  // Never write what load() would refuse: the attachment could not be released.
  if (text.size() > kMaxStateBytes) {
    return makeError(ErrorCode::kIoFailure,
                     fmt::format("state of {}/{} would be {} bytes, above the limit of {} bytes",
                                 st.container_id, st.ifname, text.size(), kMaxStateBytes));
  }
  const fs::path path = fileFor(st.container_id, st.ifname);
  struct stat existing {};
  const bool first = ::lstat(path.c_str(), &existing) != 0;
  return writeFileAtomic(path, text, first ? kCniFirstWrite : kCniWrite);
}

Result<std::optional<AttachmentState>> StateStore::load(const std::string& container_id,
                                                        const std::string& ifname,
                                                        bool* torn) const {
  if (torn != nullptr) *torn = false;
  RDMANET_ASSIGN_OR_RETURN(auto text, readSmallFile(fileFor(container_id, ifname)));
  if (!text) return std::optional<AttachmentState>();
  auto doc = parseJson(*text, kStateLimits);
  Result<AttachmentState> st =
      doc.ok() ? AttachmentState::fromJson(*doc)
               : Result<AttachmentState>(makeError(ErrorCode::kIoFailure, "state file is corrupt",
                                                   doc.error().details));
  if (st.ok()) return std::optional<AttachmentState>(std::move(st).value());
  if (torn == nullptr) return st.error();
  *torn = true;
  return std::optional<AttachmentState>();
}

std::optional<fs::file_time_type> StateStore::savedAt(const std::string& container_id,
                                                      const std::string& ifname) const {
  std::error_code ec;
  const auto t = fs::last_write_time(fileFor(container_id, ifname), ec);
  if (ec) return std::nullopt;
  return t;
}

Status StateStore::remove(const std::string& container_id, const std::string& ifname) const {
  const fs::path p = fileFor(container_id, ifname);
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    return ioError(errno, "cannot remove " + p.string());
  return okStatus();
}

std::vector<AttachmentState> StateStore::list(std::vector<std::string>* torn) const {
  return listMatching("", torn);
}

Status StateStore::removeTorn(const std::string& name) const {
  const fs::path p = dir_ / (name + ".json");
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    return ioError(errno, "cannot remove " + p.string());
  return okStatus();
}

std::vector<AttachmentState> StateStore::listContainer(const std::string& container_id) const {
  std::vector<AttachmentState> out = listMatching(container_id + "_", nullptr);
  // The prefix also matches ids that extend this one past a '_'.
  std::erase_if(out, [&](const AttachmentState& st) { return st.container_id != container_id; });
  return out;
}

std::vector<AttachmentState> StateStore::listMatching(const std::string& prefix,
                                                      std::vector<std::string>* torn) const {
  std::vector<AttachmentState> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    // Names are matched before anything is read: a lookup costs one directory listing.
    if (p.extension() != ".json" || !p.filename().string().starts_with(prefix) ||
        !it->is_regular_file(ec)) {
      continue;
    }
    auto text = readSmallFile(p);
    if (!text.ok() || !text->has_value()) continue;
    auto doc = parseJson(**text, kStateLimits);
    auto st = doc.ok() ? AttachmentState::fromJson(*doc) : Result<AttachmentState>(doc.error());
    if (st.ok()) {
      out.push_back(std::move(st).value());
    } else if (torn != nullptr) {
      torn->push_back(p.stem().string());
    }
  }
  if (torn != nullptr) std::sort(torn->begin(), torn->end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.container_id, a.ifname) < std::tie(b.container_id, b.ifname);
  });
  return out;
}

Result<std::optional<json>> StateStore::readDoc(const std::string& rel) const {
  RDMANET_ASSIGN_OR_RETURN(auto text, readSmallFile(dir_ / rel));
  if (!text) return std::optional<json>();
  auto doc = parseJson(*text, kStateLimits);
  if (!doc.ok()) return std::optional<json>();  // a corrupt cache is as good as none
  return std::optional<json>(std::move(doc).value());
}

Status StateStore::writeDoc(const std::string& rel, const json& doc) const {
  RDMANET_RETURN_IF_ERROR(ensure());
  return writeFileAtomic(dir_ / rel, dumpJson(doc), kCniWrite);
}

Status StateStore::removeDoc(const std::string& rel) const {
  const fs::path p = dir_ / rel;
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    return ioError(errno, "cannot remove " + p.string());
  return okStatus();
}

}  // namespace rdmanet::cni
