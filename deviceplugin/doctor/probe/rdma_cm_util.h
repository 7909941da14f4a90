#pragma once
// Small RAII and waiting helpers over librdmacm and libibverbs for the probe: every wait polls
// the event channel's fd with a deadline, so nothing blocks forever on a dead peer.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"

namespace rdmanet::doctor::probe {

// The probe's clock is the real one: the round trips and the bandwidth it reports are real
// elapsed time on a real link, which a fake clock could not measure.
inline const SteadyClock kProbeClock{};

struct ChannelDeleter {
  void operator()(rdma_event_channel* c) const { rdma_destroy_event_channel(c); }
};
using Channel = std::unique_ptr<rdma_event_channel, ChannelDeleter>;

// Destroys the QP (if any) and then the id.
struct IdDeleter {
  void operator()(rdma_cm_id* id) const;
};
using CmId = std::unique_ptr<rdma_cm_id, IdDeleter>;

// A channel whose fd is non-blocking (so waits can time out). Error 103 on failure.
Result<Channel> makeChannel();

// One CM event, copied out and acked.
struct CmEvent {
  rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_ERROR;
  int status = 0;
  rdma_cm_id* id = nullptr;  // the event's id (a new one on CONNECT_REQUEST)
  std::vector<uint8_t> private_data{};
};

// The next event within `timeout`. Error 103 "timed out after N ms" or the errno.
Result<CmEvent> nextEvent(rdma_event_channel* ch, std::chrono::milliseconds timeout);
// The next event must be `want`; another type is an error naming both (and the status, e.g.
// UNREACHABLE status -110).
Result<CmEvent> expectEvent(rdma_event_channel* ch, rdma_cm_event_type want,
                            std::chrono::milliseconds timeout);

// Per-connection verbs resources: PD, CQ (with a completion channel), one registered buffer
// laid out as [send slot | recv slot | write region], and the RC QP: on an rdma_cm id, or made by
// hand on a device context (the tcp exchange, which then brings it to RTS itself).
class Endpoint {
 public:
  static constexpr size_t kMsg = 64;
  static constexpr size_t kWrite = size_t{64} * 1024;
  ~Endpoint();
  // Creates everything on `id` (whose verbs context is known after route resolution or on a
  // connect request).
  static Result<std::unique_ptr<Endpoint>> create(rdma_cm_id* id);
  // Creates everything on an opened device context, the QP in RESET; the context stays the
  // caller's and must outlive the endpoint.
  static Result<std::unique_ptr<Endpoint>> create(ibv_context* ctx);
  ibv_qp* qp() const { return qp_; }
  Status postRecv();
  Status postSend(uint64_t wr_id);
  Status postWrite(uint64_t wr_id, uint64_t remote_addr, uint32_t rkey);
  // Busy-polls up to `max` completions until at least one arrives or the deadline passes
  // (error 103 "timed out"); a completion with an error status is returned as an error naming
  // ibv_wc_status_str.
  Result<std::vector<ibv_wc>> poll(Clock::time_point deadline);
  int compFd() const { return comp_->fd; }
  // After compFd() was readable: takes the event and re-arms notification.
  void ackCompEvent();
  uint64_t writeAddr() const;
  uint32_t rkey() const { return mr_->rkey; }

 private:
  Endpoint() = default;
  Status createResources(ibv_context* ctx);
  rdma_cm_id* id_ = nullptr;  // null for a hand-made QP
  ibv_qp* qp_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* comp_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::vector<uint8_t> buf_{};
};

// The private data the server sends with its accept.
struct WriteTarget {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint32_t len = 0;
};
std::vector<uint8_t> encodeTarget(const WriteTarget& t);
Result<WriteTarget> decodeTarget(const std::vector<uint8_t>& bytes);

}  // namespace rdmanet::doctor::probe
