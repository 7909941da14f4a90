#pragma once
// Mailbox: how other threads hand results back to a poll loop. post() queues an item and makes
// fd() readable; the loop polls fd() and drain()s. Items keep their order. Thread-safe.

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/base/result.h"
#include "common/os/watch.h"

namespace rdmanet {

template <typename T>
class Mailbox {
 public:
  // Error 5 when no eventfd can be made.
  static Result<std::unique_ptr<Mailbox>> open() {
    RDMANET_ASSIGN_OR_RETURN(Wakeup w, Wakeup::open());
    return std::unique_ptr<Mailbox>(new Mailbox(std::move(w)));
  }
  int fd() const { return wakeup_.fd(); }
  void post(T item) {
    std::lock_guard lk(mu_);
    items_.push_back(std::move(item));
    wakeup_.notify();
  }
  // Every item posted so far, oldest first; fd() is no longer readable until the next post().
  std::vector<T> drain() {
    // Cleared before the items are taken: a post() in between leaves the fd readable, never an
    // item behind a cleared fd.
    wakeup_.clear();
    std::lock_guard lk(mu_);
    return std::exchange(items_, {});
  }

 private:
  explicit Mailbox(Wakeup w) : wakeup_(std::move(w)) {}
  Wakeup wakeup_;
  std::mutex mu_;
  std::vector<T> items_;
};

}  // namespace rdmanet
