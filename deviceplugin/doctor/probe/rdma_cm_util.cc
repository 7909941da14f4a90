#include "deviceplugin/doctor/probe/rdma_cm_util.h"

#include <endian.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

namespace rdmanet::doctor::probe {
namespace {

Error cmError(int err, const std::string& what) {
  return errnoError(ErrorCode::kRdmaFailure, err ? err : EIO, what);
}

// Posts `wr` (its id, opcode and any remote address set by the caller) on `qp` with the one
// scatter entry `sge`, signaled, so that its completion shows in poll().
Status postSignaled(ibv_qp* qp, ibv_send_wr wr, ibv_sge sge) {
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp, &wr, &bad); rc != 0) return cmError(rc, "ibv_post_send");
  return okStatus();
}

}  // namespace

void IdDeleter::operator()(rdma_cm_id* id) const {
  if (id->qp) rdma_destroy_qp(id);
  (void)rdma_destroy_id(id);
}

Result<Channel> makeChannel() {
  Channel ch(rdma_create_event_channel());
  if (!ch) return cmError(errno, "rdma_create_event_channel (is rdma_ucm loaded?)");
  const int flags = fcntl(ch->fd, F_GETFL);
  if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return cmError(errno, "making the rdma_cm channel non-blocking");
  }
  return ch;
}

Result<CmEvent> nextEvent(rdma_event_channel* ch, std::chrono::milliseconds timeout) {
  const auto deadline = kProbeClock.now() + timeout;
  while (true) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) == 0) {
      CmEvent out{.type = ev->event, .status = ev->status, .id = ev->id};
      if (ev->param.conn.private_data && ev->param.conn.private_data_len > 0 &&
          (ev->event == RDMA_CM_EVENT_ESTABLISHED || ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE ||
           ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)) {
        const auto* p = static_cast<const uint8_t*>(ev->param.conn.private_data);
        out.private_data.assign(p, p + ev->param.conn.private_data_len);
      }
      (void)rdma_ack_cm_event(ev);
      return out;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) return cmError(errno, "rdma_get_cm_event");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - kProbeClock.now());
    if (left.count() <= 0) {
      return makeError(ErrorCode::kRdmaFailure,
                       fmt::format("no rdma_cm event within {} ms", timeout.count()));
    }
    pollfd pfd{.fd = ch->fd, .events = POLLIN, .revents = 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
      return cmError(errno, "poll on the rdma_cm channel");
    }
  }
}

Result<CmEvent> expectEvent(rdma_event_channel* ch, rdma_cm_event_type want,
                            std::chrono::milliseconds timeout) {
  RDMANET_ASSIGN_OR_RETURN(CmEvent ev, nextEvent(ch, timeout));
  if (ev.type != want) {
    return makeError(
        ErrorCode::kRdmaFailure,
        fmt::format("expected {}, got {} (status {}{})", rdma_event_str(want),
                    rdma_event_str(ev.type), ev.status,
                    ev.status < 0 ? ": " + std::string(std::strerror(-ev.status)) : std::string()));
  }
  return ev;
}

Endpoint::~Endpoint() {
  if (id_ && id_->qp) {
    rdma_destroy_qp(id_);
  } else if (!id_ && qp_) {
    (void)ibv_destroy_qp(qp_);
  }
  if (mr_) (void)ibv_dereg_mr(mr_);
  if (cq_) (void)ibv_destroy_cq(cq_);
  if (comp_) (void)ibv_destroy_comp_channel(comp_);
  if (pd_) (void)ibv_dealloc_pd(pd_);
}

Status Endpoint::createResources(ibv_context* ctx) {
  pd_ = ibv_alloc_pd(ctx);
  if (!pd_) return cmError(errno, "ibv_alloc_pd");
  comp_ = ibv_create_comp_channel(ctx);
  if (!comp_) return cmError(errno, "ibv_create_comp_channel");
  const int flags = fcntl(comp_->fd, F_GETFL);
  (void)fcntl(comp_->fd, F_SETFL, flags | O_NONBLOCK);
  cq_ = ibv_create_cq(ctx, 256, nullptr, comp_, 0);
  if (!cq_) return cmError(errno, "ibv_create_cq");
  if (int rc = ibv_req_notify_cq(cq_, 0); rc != 0) return cmError(rc, "ibv_req_notify_cq");
  buf_.assign(2 * kMsg + kWrite, 0);
  mr_ = ibv_reg_mr(pd_, buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (!mr_) return cmError(errno, "ibv_reg_mr (is the locked-memory limit too low?)");
  return okStatus();
}

namespace {
ibv_qp_init_attr rcQpAttr(ibv_cq* cq) {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 64;
  attr.cap.max_recv_wr = 64;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  return attr;
}
}  // namespace

Result<std::unique_ptr<Endpoint>> Endpoint::create(rdma_cm_id* id) {
  std::unique_ptr<Endpoint> e(new Endpoint());
  e->id_ = id;
  if (!id->verbs) return makeError(ErrorCode::kRdmaFailure, "the rdma_cm id has no device");
  RDMANET_RETURN_IF_ERROR(e->createResources(id->verbs));
  ibv_qp_init_attr attr = rcQpAttr(e->cq_);
  if (rdma_create_qp(id, e->pd_, &attr) != 0) return cmError(errno, "rdma_create_qp");
  e->qp_ = id->qp;
  return e;
}

Result<std::unique_ptr<Endpoint>> Endpoint::create(ibv_context* ctx) {
  std::unique_ptr<Endpoint> e(new Endpoint());
  RDMANET_RETURN_IF_ERROR(e->createResources(ctx));
  ibv_qp_init_attr attr = rcQpAttr(e->cq_);
  e->qp_ = ibv_create_qp(e->pd_, &attr);
  if (!e->qp_) return cmError(errno, "ibv_create_qp");
  return e;
}

Status Endpoint::postRecv() {
  ibv_sge sge{
      .addr = reinterpret_cast<uintptr_t>(buf_.data() + kMsg), .length = kMsg, .lkey = mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = 0;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_, &wr, &bad); rc != 0) return cmError(rc, "ibv_post_recv");
  return okStatus();
}

Status Endpoint::postSend(uint64_t wr_id) {
  ibv_sge sge{.addr = reinterpret_cast<uintptr_t>(buf_.data()), .length = kMsg, .lkey = mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = IBV_WR_SEND;
  return postSignaled(qp_, wr, sge);
}

Status Endpoint::postWrite(uint64_t wr_id, uint64_t remote_addr, uint32_t rkey) {
  ibv_sge sge{.addr = reinterpret_cast<uintptr_t>(buf_.data() + 2 * kMsg),
              .length = kWrite,
              .lkey = mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  return postSignaled(qp_, wr, sge);
}

Result<std::vector<ibv_wc>> Endpoint::poll(Clock::time_point deadline) {
  ibv_wc wc[16];
  while (true) {
    const int n = ibv_poll_cq(cq_, 16, wc);
    if (n < 0) return cmError(EIO, "ibv_poll_cq");
    if (n > 0) {
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) {
          return makeError(
              ErrorCode::kRdmaFailure,
              fmt::format("completion error: {} (status {}, opcode {})",
                          ibv_wc_status_str(wc[i].status), static_cast<int>(wc[i].status),
                          static_cast<int>(wc[i].opcode)));
        }
      }
      return std::vector<ibv_wc>(wc, wc + n);
    }
    if (kProbeClock.now() >= deadline) {
      return makeError(ErrorCode::kRdmaFailure, "no completion before the deadline");
    }
  }
}

void Endpoint::ackCompEvent() {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(comp_, &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
  (void)ibv_req_notify_cq(cq_, 0);
}

uint64_t Endpoint::writeAddr() const { return reinterpret_cast<uintptr_t>(buf_.data() + 2 * kMsg); }

std::vector<uint8_t> encodeTarget(const WriteTarget& t) {
  std::vector<uint8_t> b(16);
  const uint64_t a = htobe64(t.addr);
  const uint32_t k = htobe32(t.rkey), l = htobe32(t.len);
  std::memcpy(b.data(), &a, 8);
  std::memcpy(b.data() + 8, &k, 4);
  std::memcpy(b.data() + 12, &l, 4);
  return b;
}

Result<WriteTarget> decodeTarget(const std::vector<uint8_t>& b) {
  // RoCE's CM pads private data (to 56 bytes on connect replies): only the first 16 count.
  if (b.size() < 16) {
    return makeError(
        ErrorCode::kRdmaFailure,
        fmt::format("the server's accept carried {} bytes, not a write target", b.size()));
  }
  uint64_t a;
  uint32_t k, l;
  std::memcpy(&a, b.data(), 8);
  std::memcpy(&k, b.data() + 8, 4);
  std::memcpy(&l, b.data() + 12, 4);
  return WriteTarget{.addr = be64toh(a), .rkey = be32toh(k), .len = be32toh(l)};
}

}  // namespace rdmanet::doctor::probe
