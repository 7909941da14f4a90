#pragma once
// FakeNetnsSysfs: a NetnsSysfs (common/net/netns_sysfs.h) whose namespaces are fake sysfs
// trees: each netns path maps to a root directory playing that namespace's "/". Reads run on
// the caller's thread; an unknown path answers error 3 (ENOENT) like a pod that is gone.

#include <cerrno>
#include <map>
#include <string>

#include "common/net/netns_sysfs.h"

namespace rdmanet {

class FakeNetnsSysfs final : public NetnsSysfs {
 public:
  void add(const std::string& netns_path, std::string root) {
    roots_[netns_path] = std::move(root);
  }
  void remove(const std::string& netns_path) { roots_.erase(netns_path); }
  int reads() const { return reads_; }

  Status read(const std::string& netns_path, const Fn& fn) override {
    ++reads_;
    auto it = roots_.find(netns_path);
    if (it == roots_.end()) {
      return errnoError(ErrorCode::kContainerUnknown, ENOENT, "netns \"" + netns_path + "\"");
    }
    fn(Sysfs(it->second));
    return okStatus();
  }

 private:
  std::map<std::string, std::string> roots_;
  int reads_ = 0;
};

}  // namespace rdmanet
