#include "deviceplugin/front/kubelet_dir_watcher.h"

#include <sys/inotify.h>

#include <algorithm>

#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

namespace {

// The entries coming and going, and the directory itself going: IN_IGNORED, which the kernel
// adds when a watch ends, needs no bit here.
constexpr uint32_t kDirMask =
    IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;

}  // namespace

KubeletDirWatcher::KubeletDirWatcher(std::vector<Dir> dirs, const Clock& clock)
    : dirs_(std::move(dirs)), clock_(clock), wds_(dirs_.size(), -1) {}

int KubeletDirWatcher::fd() const { return inotify_ ? inotify_->fd() : -1; }

Status KubeletDirWatcher::start() {
  RDMANET_ASSIGN_OR_RETURN(Inotify in, Inotify::open());
  inotify_.emplace(std::move(in));
  for (const Dir& d : dirs_) {
    std::error_code ec;
    fs::create_directories(d.path, ec);  // a failure shows as a directory that cannot be watched
  }
  watchAll();
  return okStatus();
}

void KubeletDirWatcher::watchAll() {
  for (size_t i = 0; i < dirs_.size(); ++i) {
    auto wd = inotify_->watch(dirs_[i].path, kDirMask);
    if (!wd.ok()) {
      unwatchAll();
      rewatch_at_ = clock_.now() + kRewatch;
      return;
    }
    wds_[i] = *wd;
  }
  watching_ = true;
  rewatch_at_.reset();
  waiting_logged_ = false;
}

void KubeletDirWatcher::unwatchAll() {
  for (int& wd : wds_) {
    // The watch of a vanished directory has ended already; the kernel refuses that one quietly.
    if (wd >= 0) inotify_->unwatch(wd);
    wd = -1;
  }
  watching_ = false;
}

std::vector<KubeletDirWatcher::Event> KubeletDirWatcher::onReadable() {
  std::vector<Event> out;
  if (!inotify_) return out;
  // Drained whole even past a vanish: the fd must not stay readable.
  for (auto& e : inotify_->drain()) {
    // Unwatched directories still deliver their IN_IGNORED: a wd of -1 matches none.
    auto it = std::find(wds_.begin(), wds_.end(), e.wd);
    if (e.wd < 0 || it == wds_.end()) continue;
    const auto dir = static_cast<size_t>(it - wds_.begin());
    if (e.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
      logger(Component::kKubelet)
          ->warn("{} vanished; waiting for it to come back (kubelet restart?)",
                 dirs_[dir].path.string());
      unwatchAll();
      rewatch_at_ = clock_.now() + kRewatch;
      out.push_back({.kind = Event::Kind::kVanished, .dir = dir});
      return out;
    }
    if (e.mask & (IN_CREATE | IN_MOVED_TO)) {
      out.push_back({.kind = Event::Kind::kCreated, .dir = dir, .name = std::move(e.name)});
      continue;
    }
    // A delete that a later create already undid (the front re-served the socket itself, or
    // kubelet made it again) needs nothing.
    std::error_code ec;
    if (fs::exists(dirs_[dir].path / e.name, ec)) continue;
    out.push_back({.kind = Event::Kind::kRemoved, .dir = dir, .name = std::move(e.name)});
  }
  return out;
}

bool KubeletDirWatcher::runTimers(Clock::time_point now) {
  if (!rewatch_at_ || *rewatch_at_ > now) return false;
  rewatch_at_.reset();
  auto log = logger(Component::kKubelet);
  std::error_code ec;
  const auto there = [&ec](const Dir& d) { return fs::is_directory(d.path, ec); };
  if (std::all_of(dirs_.begin(), dirs_.end(), [&](const Dir& d) { return d.ours || there(d); })) {
    for (const Dir& d : dirs_) {
      if (d.ours) fs::create_directories(d.path, ec);
    }
  }
  if (std::all_of(dirs_.begin(), dirs_.end(), there)) {
    watchAll();
    if (watching_) {
      log->info("{} is back: serving the sockets again", dirs_.front().path.string());
      return true;
    }
    return false;
  }
  if (!waiting_logged_) {
    auto absent = std::find_if_not(dirs_.begin(), dirs_.end(), there);
    log->info("{} still absent; checking again every {} ms", absent->path.string(),
              kRewatch.count());
    waiting_logged_ = true;
  }
  rewatch_at_ = now + kRewatch;
  return false;
}

}  // namespace rdmanet::dp
