#include "tests/fakes/fake_link_monitor.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace rdmanet {
namespace {

bool sameState(const LinkInfo& a, const LinkInfo& b) {
  return a.name == b.name && a.admin_up == b.admin_up && a.carrier == b.carrier &&
         a.operstate == b.operstate && a.mtu == b.mtu && a.mac == b.mac;
}

}  // namespace

FakeLinkMonitor::FakeLinkMonitor(FakeKernel& kernel, std::string ns)
    : kernel_(kernel), ns_(std::move(ns)) {
  efd_ = Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (efd_.get() < 0) std::abort();
  // Like a freshly subscribed socket: no backlog; changes from now on are reported.
  for (const FakeLink& l : kernel_.linksIn(ns_)) seen_[l.info.ifindex] = l.info;
  kernel_.subscribe(efd_.get());
}

FakeLinkMonitor::~FakeLinkMonitor() { kernel_.unsubscribe(efd_.get()); }

Status FakeLinkMonitor::drain(const Callback& cb) {
  uint64_t n = 0;
  (void)::read(efd_.get(), &n, sizeof(n));  // clears readiness; EAGAIN when nothing happened
  std::map<int, LinkInfo> now;
  for (const FakeLink& l : kernel_.linksIn(ns_)) now[l.info.ifindex] = l.info;
  for (const auto& [idx, info] : seen_) {
    if (!now.count(idx)) cb(info, true);
  }
  for (const auto& [idx, info] : now) {
    auto it = seen_.find(idx);
    if (it == seen_.end() || !sameState(it->second, info)) cb(info, false);
  }
  seen_ = std::move(now);
  return okStatus();
}

bool FakeLinkMonitor::takeResync() { return std::exchange(resync_, false); }

void FakeLinkMonitor::overflow() {
  resync_ = true;
  const uint64_t one = 1;
  (void)::write(efd_.get(), &one, sizeof(one));
}

}  // namespace rdmanet
