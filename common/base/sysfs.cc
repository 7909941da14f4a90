#include "common/base/sysfs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "common/base/fd.h"

namespace fs = std::filesystem;

namespace rdmanet {

Sysfs::Sysfs(fs::path root, SysfsObserver* observer)
    : root_(root.empty() ? fs::path("/") : std::move(root)), observer_(observer) {}

fs::path Sysfs::path(std::string_view abs) const {
  std::string_view rel = abs;
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  return root_ / fs::path(rel);
}

std::optional<std::string> Sysfs::inTree(const fs::path& host) const {
  const fs::path norm = host.lexically_normal();
  const fs::path rel = norm.lexically_relative(root_.lexically_normal());
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  if (rel == ".") return std::string("/");
  return "/" + rel.generic_string();
}

namespace {

// open/read/close and no stream: a node scan reads tens of thousands of attributes. At most
// `max_bytes` are kept.
std::optional<std::string> readWhole(const fs::path& file, size_t max_bytes) {
  const Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  std::string s;
  char buf[4096];
  while (s.size() < max_bytes) {
    const ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, max_bytes - s.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    s.append(buf, static_cast<size_t>(n));
    // A sysfs attribute comes whole in one read, and a short read of a regular file is its
    // end: no second read just to see EOF.
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  return s;
}

// A sysfs attribute is a page at most; the bound only keeps a stray huge file from being read
// whole.
constexpr size_t kMaxAttribute = 1 << 20;

}  // namespace

Result<std::string> Sysfs::read(std::string_view abs) const {
  seen(SysfsOp::kOpen, abs);
  auto s = readWhole(path(abs), kMaxAttribute);
  if (!s) return makeError(ErrorCode::kDeviceNotFound, fmt::format("cannot read {}", abs));
  while (!s->empty() && (s->back() == '\n' || s->back() == ' ')) s->pop_back();
  return std::move(*s);
}

Result<std::string> Sysfs::readBytes(std::string_view abs, size_t max_bytes) const {
  seen(SysfsOp::kOpen, abs);
  auto s = readWhole(path(abs), max_bytes);
  if (!s) return makeError(ErrorCode::kDeviceNotFound, fmt::format("cannot read {}", abs));
  return std::move(*s);
}

std::optional<std::string> Sysfs::readOpt(std::string_view abs) const {
  auto r = read(abs);
  if (!r.ok()) return std::nullopt;
  return std::move(r).value();
}

std::optional<long long> Sysfs::readInt(std::string_view abs) const {
  auto s = readOpt(abs);
  if (!s || s->empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s->c_str(), &end, 0);
  if (errno != 0 || end == s->c_str() || (*end != '\0' && *end != '\n')) return std::nullopt;
  return v;
}

bool Sysfs::exists(std::string_view abs) const {
  seen(SysfsOp::kStat, abs);
  std::error_code ec;
  return fs::exists(path(abs), ec);
}

std::vector<std::string> Sysfs::list(std::string_view abs) const {
  seen(SysfsOp::kList, abs);
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(path(abs), ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Sysfs::resolveLink(std::string_view abs) const {
  seen(SysfsOp::kReadLink, abs);
  std::error_code ec;
  const fs::path link = path(abs);
  const fs::path target = fs::read_symlink(link, ec);
  if (ec) return std::nullopt;
  // Kernel links are relative ("../../../devices/..."). An absolute target is taken as in-tree.
  const fs::path host = target.is_absolute() ? path(target.generic_string())
                                             : (link.parent_path() / target).lexically_normal();
  return inTree(host);
}

std::optional<std::string> Sysfs::linkName(std::string_view abs) const {
  seen(SysfsOp::kReadLink, abs);
  std::error_code ec;
  const fs::path target = fs::read_symlink(path(abs), ec);
  if (ec) return std::nullopt;
  return target.filename().string();
}

std::optional<std::string> Sysfs::canonical(std::string_view abs) const {
  seen(SysfsOp::kCanonical, abs);
  std::error_code ec;
  const fs::path host = fs::canonical(path(abs), ec);
  if (ec) return std::nullopt;
  // The root may itself sit behind a link (/tmp -> /private/tmp): compare canonical to canonical.
  const fs::path root = fs::canonical(root_, ec);
  if (ec) return std::nullopt;
  return Sysfs(root).inTree(host);
}

}  // namespace rdmanet
