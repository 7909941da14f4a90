#pragma once
// FakeRdmaVerbs: an RdmaVerbs that answers from a table the test fills, with the errors the
// real one gives (error 100 for a device libibverbs does not list, 103 with EACCES/ENODEV for a
// device that does not open). FakePauseReader: the same for PauseReader (ENODEV for an unknown
// port, any errno a test injects).

#include <map>
#include <string>

#include "common/net/pause.h"
#include "common/rdma/rdma_verbs.h"

namespace rdmanet {

class FakeRdmaVerbs final : public RdmaVerbs {
 public:
  // Answers query(facts.name) with `facts` (source set to kVerbs).
  void set(DeviceFacts facts);
  // query(device) fails to open it with `err` (error 103, sys_errno err).
  void failOpen(const std::string& device, int err);
  void remove(const std::string& device);
  int queries() const { return queries_; }

  Result<std::vector<std::string>> devices() override;
  Result<DeviceFacts> query(const std::string& device) override;

 private:
  std::map<std::string, DeviceFacts> devices_;
  std::map<std::string, int> open_errors_;
  int queries_ = 0;
};

class FakePauseReader final : public PauseReader {
 public:
  void set(const std::string& ifname, PauseState s) { ports_[ifname] = s; }
  // pause(ifname) answers errno `err` (EOPNOTSUPP: a driver without pause settings).
  void fail(const std::string& ifname, int err) { errors_[ifname] = err; }
  Result<PauseState> pause(const std::string& ifname) override;

 private:
  std::map<std::string, PauseState> ports_;
  std::map<std::string, int> errors_;
};

}  // namespace rdmanet
