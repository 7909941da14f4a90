#pragma once
// KubeletDirWatcher: the directories a front serves its sockets in, watched (inotify) so that a
// kubelet restart never leaves the front unreachable. Both fronts use it: the device-plugin one
// on <kubelet-dir>/device-plugins, the DRA one on plugins_registry and plugins/<driver>.
//
// - An entry deleted or moved away, and not there again when the events are read, is reported
//   kRemoved: the front serves its socket again (kubelet's restart deletes them). An entry that
//   appears is reported kCreated (kubelet.sock: a new kubelet).
// - A directory that vanishes drops the watches on all of them and is reported kVanished. From
//   then on runTimers() looks every kRewatch; once every directory is back it watches them all
//   again and returns true: the front serves its sockets again in them. Directories marked
//   `ours` are made again as soon as kubelet's are back, since kubelet does not make them.
// - All or nothing: the directories are watched together or not at all, so a front never serves
//   in one directory of a kubelet that is still setting up the other.
//
// Driven from the daemon loop's thread, like the fronts: fd() is polled and the timer reads the
// injected clock, so tests drive the re-watch without sleeping. Not thread-safe. Logs on the
// kubelet logger: a vanish (warn), a return (info), and "still absent" once per absence.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "common/os/watch.h"

namespace rdmanet::dp {

class KubeletDirWatcher {
 public:
  struct Dir {
    std::filesystem::path path{};
    bool ours = false;  // the front's own: made again once kubelet's directories are back
  };
  struct Event {
    enum class Kind { kCreated, kRemoved, kVanished };
    Kind kind = Kind::kCreated;
    size_t dir = 0;      // index into the constructor's directories
    std::string name{};  // the entry ("kubelet.sock"); empty for kVanished

    bool operator==(const Event&) const = default;
  };
  static constexpr std::chrono::milliseconds kRewatch{500};

  // `clock` must outlive the watcher.
  KubeletDirWatcher(std::vector<Dir> dirs, const Clock& clock);

  // Opens inotify, makes the directories that are missing (kubelet makes them; the front may be
  // first) and watches them; when one cannot be watched, retries as after a vanish. Error 5 when
  // inotify is unavailable.
  Status start();
  // The inotify fd to poll; -1 before start().
  int fd() const;
  // Every directory is watched (false before start() and while one is absent).
  bool watching() const { return watching_; }
  const std::filesystem::path& dir(size_t i) const { return dirs_.at(i).path; }

  // Reads the pending events of the watched directories, in the kernel's order. A kVanished
  // ends the list: what followed it concerned directories no longer watched.
  std::vector<Event> onReadable();
  // When runTimers() wants to run next; empty while every directory is watched.
  std::optional<Clock::time_point> nextDeadline() const { return rewatch_at_; }
  // Looks for absent directories when it is time. True when they have just been watched again:
  // the caller serves its sockets again.
  bool runTimers(Clock::time_point now);

 private:
  void watchAll();
  void unwatchAll();

  std::vector<Dir> dirs_;
  const Clock& clock_;
  std::optional<Inotify> inotify_;
  std::vector<int> wds_;  // per directory; -1 when not watched
  bool watching_ = false;
  std::optional<Clock::time_point> rewatch_at_;
  bool waiting_logged_ = false;  // "still absent" said once per absence
};

}  // namespace rdmanet::dp
