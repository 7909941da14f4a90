#include "common/os/watch.h"

#include <fmt/format.h>
#include <linux/netlink.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace rdmanet {

Result<Inotify> Inotify::open() {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "inotify_init1");
  return Inotify(Fd(fd));
}

Result<int> Inotify::watch(const std::filesystem::path& dir, uint32_t mask) {
  int wd = inotify_add_watch(fd_.get(), dir.c_str(), mask);
  if (wd < 0) {
    return errnoError(ErrorCode::kIoFailure, errno, fmt::format("cannot watch {}", dir.string()));
  }
  return wd;
}

void Inotify::unwatch(int wd) { (void)inotify_rm_watch(fd_.get(), wd); }

std::vector<Inotify::Event> Inotify::drain() {
  std::vector<Event> out;
  alignas(struct inotify_event) std::array<char, 8192> buf;
  while (true) {
    ssize_t n = ::read(fd_.get(), buf.data(), buf.size());
    if (n <= 0) break;  // EAGAIN: drained
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const struct inotify_event*>(buf.data() + off);
      out.push_back({ev->wd, ev->mask, ev->len ? std::string(ev->name) : std::string()});
      off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
    }
  }
  return out;
}

Result<UeventSocket> UeventSocket::open() {
  int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
  if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "uevent socket");
  Fd guard(fd);
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = 1;  // the kernel's broadcast group (udev listens on group 2)
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return errnoError(ErrorCode::kIoFailure, errno, "bind uevent socket");
  }
  return UeventSocket(std::move(guard));
}

std::vector<std::string> UeventSocket::drainRelevant() {
  std::vector<std::string> out;
  std::array<char, 8192> buf;
  while (true) {
    ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n <= 0) break;
    // "ACTION@DEVPATH\0KEY=VALUE\0...": look at ACTION, SUBSYSTEM and DEVPATH only.
    std::string_view action, subsystem, devpath;
    for (size_t off = 0; off < static_cast<size_t>(n);) {
      std::string_view field(buf.data() + off, strnlen(buf.data() + off, n - off));
      if (field.starts_with("ACTION=")) action = field.substr(7);
      if (field.starts_with("SUBSYSTEM=")) subsystem = field.substr(10);
      if (field.starts_with("DEVPATH=")) devpath = field.substr(8);
      off += field.size() + 1;
    }
    bool change = action == "add" || action == "remove" || action == "bind" || action == "unbind";
    if (change && (subsystem == "pci" || subsystem == "net" || subsystem == "infiniband")) {
      out.emplace_back(devpath);
    }
  }
  return out;
}

Result<Wakeup> Wakeup::open() {
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "eventfd");
  return Wakeup(Fd(fd));
}

void Wakeup::notify() {
  uint64_t one = 1;
  (void)!::write(fd_.get(), &one, sizeof(one));
}

void Wakeup::clear() {
  uint64_t v;
  (void)!::read(fd_.get(), &v, sizeof(v));
}

}  // namespace rdmanet
