#pragma once
// Rollback: RAII undo steps with an explicit commit (CONTRIBUTING.md, "Rollback and recovery").
//
//   Rollback rb(log);
//   RDMANET_RETURN_IF_ERROR(step1());  rb.push("undo step1", [&] { return undo1(); });
//   RDMANET_RETURN_IF_ERROR(step2());  rb.push("undo step2", [&] { return undo2(); });
//   rb.dismiss();  // success: keep everything
//
// On destruction without dismiss(), the steps run newest first. A failing undo step is logged
// and the rest still run: rollback is best effort by nature, and one stuck step must not leave
// everything else behind.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cni/conf/logger.h"
#include "common/base/result.h"

namespace rdmanet::cni {

class Rollback {
 public:
  using Undo = std::function<Status()>;
  explicit Rollback(Logger& log) : log_(log) {}
  Rollback(const Rollback&) = delete;
  Rollback& operator=(const Rollback&) = delete;
  ~Rollback() { run(); }

  void push(std::string what, Undo undo) { steps_.emplace_back(std::move(what), std::move(undo)); }
  void dismiss() { steps_.clear(); }
  // Runs the pending steps now (newest first) and forgets them.
  void run() {
    while (!steps_.empty()) {
      auto [what, undo] = std::move(steps_.back());
      steps_.pop_back();
      const Status s = undo();
      if (!s.ok()) log_.warn("rollback: {} failed: {}", what, s.error().msg);
    }
  }
  size_t size() const { return steps_.size(); }

 private:
  Logger& log_;
  std::vector<std::pair<std::string, Undo>> steps_;
};

}  // namespace rdmanet::cni
