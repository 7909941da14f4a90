#pragma once
// FakeLinkMonitor: a LinkMonitor over one FakeKernel namespace, for device-plugin health tests.
//
// fd() is a real eventfd that becomes readable whenever the fake kernel's state changes (any
// successful FakeNetlink mutation, setCarrier, addLink, deleteNetns...), so poll/epoll loops work
// unchanged. drain() reports the difference since the previous drain, per link: a new or changed
// link (name, up, carrier, operstate, MTU, MAC) as (link, false), a vanished one as (last seen
// state, true). Intermediate states between two drains are coalesced, which the real kernel
// never does; tests must not count events, only look at the final state per link.
// overflow() simulates ENOBUFS: takeResync() returns true once afterwards.

#include <map>

#include "common/base/fd.h"
#include "common/net/link_monitor.h"
#include "tests/fakes/fake_kernel.h"

namespace rdmanet {

class FakeLinkMonitor : public LinkMonitor {
 public:
  FakeLinkMonitor(FakeKernel& kernel, std::string ns = FakeKernel::kHost);
  ~FakeLinkMonitor() override;
  FakeLinkMonitor(const FakeLinkMonitor&) = delete;
  FakeLinkMonitor& operator=(const FakeLinkMonitor&) = delete;

  int fd() const override { return efd_.get(); }
  Status drain(const Callback& cb) override;
  bool takeResync() override;

  // The kernel "dropped" notifications: the fd becomes readable and takeResync() turns true.
  void overflow();

 private:
  FakeKernel& kernel_;
  std::string ns_;
  Fd efd_;
  bool resync_ = false;
  std::map<int, LinkInfo> seen_;  // by ifindex
};

}  // namespace rdmanet
