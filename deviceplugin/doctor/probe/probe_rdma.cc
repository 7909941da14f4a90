// The probe's client and server over librdmacm (see probe_rdma.h for the wire protocol).
#include "deviceplugin/doctor/probe/probe_rdma.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>

#include <cstring>

#include "common/rdma/ibv_verbs.h"
#include "deviceplugin/doctor/probe/probe_exchange.h"
#include "deviceplugin/doctor/probe/rdma_cm_util.h"

namespace rdmanet::doctor {
namespace {

using namespace std::chrono;
using probe::CmEvent;
using probe::CmId;
using probe::Endpoint;

// ADDR[:PORT] -> sockaddr (IPv4 or IPv6 literal, or a name getaddrinfo resolves).
Result<sockaddr_storage> toSockaddr(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string svc = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), svc.c_str(), &hints, &res);
      rc != 0) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("address \"{}\": {}", host, gai_strerror(rc)));
  }
  sockaddr_storage ss{};
  std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return ss;
}

std::string gidText(const ibv_gid& g) {
  char buf[INET6_ADDRSTRLEN] = {};
  return inet_ntop(AF_INET6, g.raw, buf, sizeof(buf)) ? buf : "?";
}

// Fills the GID index, traffic class and SL the QP uses (its address vector after connect).
void readPath(rdma_cm_id* id, ProbeReport& r) {
  r.device = ibv_get_device_name(id->verbs->device);
  r.port_num = id->port_num;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(id->qp, &attr, IBV_QP_AV, &init) != 0) return;
  r.gid_index = attr.ah_attr.grh.sgid_index;
  r.traffic_class = attr.ah_attr.grh.traffic_class;
  r.sl = attr.ah_attr.sl;
  ibv_gid gid{};
  if (ibv_query_gid(id->verbs, id->port_num, r.gid_index, &gid) == 0) r.gid = gidText(gid);
}

}  // namespace

namespace probe {

bool fail(ProbeReport& r, const std::string& stage, const Error& e) {
  r.failed_stage = stage;
  r.error = e.msg;
  return false;
}

bool pingPong(Endpoint& ep, const ProbeOptions& o, ProbeReport& r) {
  const auto step = milliseconds(o.timeout_ms);
  for (int i = 0; i < o.count; ++i) {
    if (auto s = ep.postRecv(); !s.ok()) return fail(r, "ping", s.error());
    const auto start = probe::kProbeClock.now();
    if (auto s = ep.postSend(1); !s.ok()) return fail(r, "ping", s.error());
    bool sent = false, got = false;
    while (!sent || !got) {
      auto wcs = ep.poll(start + step);
      if (!wcs.ok()) {
        return fail(r, "ping",
                    wcs.error().context(fmt::format("message {} of {}", i + 1, o.count)));
      }
      for (const auto& wc : *wcs) {
        if (wc.opcode == IBV_WC_SEND) sent = true;
        if (wc.opcode == IBV_WC_RECV) got = true;
      }
    }
    r.rtt_us.push_back(duration<double, std::micro>(probe::kProbeClock.now() - start).count());
  }
  return true;
}

bool writeBandwidth(Endpoint& ep, const probe::WriteTarget& t, const ProbeOptions& o,
                    ProbeReport& r) {
  r.bandwidth_run = true;
  if (t.len < Endpoint::kWrite) {
    return fail(r, "write", makeError(ErrorCode::kRdmaFailure, "the server's buffer is too small"));
  }
  constexpr int kWindow = 16;
  const int total = std::max(64, o.count / 2);
  int posted = 0, done = 0;
  const auto start = probe::kProbeClock.now();
  while (done < total) {
    while (posted < total && posted - done < kWindow) {
      if (auto s = ep.postWrite(2, t.addr, t.rkey); !s.ok()) return fail(r, "write", s.error());
      ++posted;
    }
    auto wcs = ep.poll(probe::kProbeClock.now() + milliseconds(o.timeout_ms));
    if (!wcs.ok()) {
      return fail(r, "write", wcs.error().context(fmt::format("write {} of {}", done + 1, total)));
    }
    done += static_cast<int>(wcs->size());
  }
  const double secs = duration<double>(probe::kProbeClock.now() - start).count();
  r.bytes = static_cast<uint64_t>(total) * Endpoint::kWrite;
  r.gbps = secs > 0 ? static_cast<double>(r.bytes) * 8 / secs / 1e9 : 0;
  IbvRdmaVerbs verbs;
  if (auto f = verbs.query(r.device);
      f.ok() && r.port_num >= 1 && r.port_num <= static_cast<int>(f->ports.size())) {
    r.port_gbps = f->ports[r.port_num - 1].rate_gbps;
  }
  return true;
}

}  // namespace probe

namespace {

using probe::fail;
using probe::pingPong;
using probe::writeBandwidth;

ProbeReport runCmClient(const ProbeOptions& o) {
  ProbeReport r = clientReport(o);
  const auto step = milliseconds(o.timeout_ms);
  auto ch = probe::makeChannel();
  if (!ch.ok()) return fail(r, "rdma_cm", ch.error()), r;
  rdma_cm_id* raw = nullptr;
  if (rdma_create_id(ch->get(), &raw, nullptr, RDMA_PS_TCP) != 0) {
    return fail(r, "rdma_cm", errnoError(ErrorCode::kRdmaFailure, errno, "rdma_create_id")), r;
  }
  CmId id(raw);
  auto dst = toSockaddr(o.peer, o.port);
  if (!dst.ok()) return fail(r, "resolve address", dst.error()), r;
  std::optional<sockaddr_storage> src;
  if (!o.bind.empty()) {
    auto s = toSockaddr(o.bind, 0);
    if (!s.ok()) return fail(r, "resolve address", s.error()), r;
    src = *s;
  }
  if (rdma_resolve_addr(id.get(), src ? reinterpret_cast<sockaddr*>(&*src) : nullptr,
                        reinterpret_cast<sockaddr*>(&*dst), o.timeout_ms) != 0) {
    return fail(r, "resolve address",
                errnoError(ErrorCode::kRdmaFailure, errno, "rdma_resolve_addr")),
           r;
  }
  if (auto e = probe::expectEvent(ch->get(), RDMA_CM_EVENT_ADDR_RESOLVED, step); !e.ok()) {
    return fail(r, "resolve address", e.error()), r;
  }
  r.device = ibv_get_device_name(id->verbs->device);
  r.port_num = id->port_num;
  if (!o.device.empty() && r.device != o.device) {
    return fail(r, "resolve address",
                makeError(ErrorCode::kRdmaFailure,
                          fmt::format("the route to {} leaves through {}, not {}", o.peer, r.device,
                                      o.device))),
           r;
  }
  const uint8_t tos = static_cast<uint8_t>(o.effectiveTos());
  if (rdma_set_option(id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, const_cast<uint8_t*>(&tos),
                      sizeof(tos)) != 0) {
    return fail(r, "set tos", errnoError(ErrorCode::kRdmaFailure, errno, "rdma_set_option(TOS)")),
           r;
  }
  if (rdma_resolve_route(id.get(), o.timeout_ms) != 0) {
    return fail(r, "resolve route",
                errnoError(ErrorCode::kRdmaFailure, errno, "rdma_resolve_route")),
           r;
  }
  if (auto e = probe::expectEvent(ch->get(), RDMA_CM_EVENT_ROUTE_RESOLVED, step); !e.ok()) {
    return fail(r, "resolve route", e.error()), r;
  }
  auto ep = Endpoint::create(id.get());
  if (!ep.ok()) return fail(r, "create qp", ep.error()), r;
  rdma_conn_param cp{};
  cp.responder_resources = 1;
  cp.initiator_depth = 1;
  cp.retry_count = 3;  // a lost ACK is retried 3 times, then the QP errors: bounded
  cp.rnr_retry_count = 3;
  if (rdma_connect(id.get(), &cp) != 0) {
    return fail(r, "connect", errnoError(ErrorCode::kRdmaFailure, errno, "rdma_connect")), r;
  }
  auto est = probe::expectEvent(ch->get(), RDMA_CM_EVENT_ESTABLISHED, step);
  if (!est.ok()) return fail(r, "connect", est.error()), r;
  readPath(id.get(), r);
  auto target = probe::decodeTarget(est->private_data);
  if (!target.ok()) return fail(r, "connect", target.error()), r;
  if (pingPong(**ep, o, r) && o.bandwidth) writeBandwidth(**ep, *target, o, r);
  (void)rdma_disconnect(id.get());
  (void)probe::nextEvent(ch->get(), milliseconds(std::min(o.timeout_ms, 1000)));
  ep->reset();  // the QP and resources before the id
  return r;
}

// Serves one accepted connection until the client disconnects or goes quiet.
void serve(rdma_event_channel* ch, rdma_cm_id* conn, const ProbeOptions& o, std::ostream& log) {
  CmId id(conn);
  auto ep = Endpoint::create(conn);
  if (!ep.ok()) {
    log << "probe: " << ep.error().msg << "\n";
    (void)rdma_reject(conn, nullptr, 0);
    return;
  }
  for (int i = 0; i < 32; ++i) (void)(*ep)->postRecv();
  const auto priv = probe::encodeTarget(
      {.addr = (*ep)->writeAddr(), .rkey = (*ep)->rkey(), .len = Endpoint::kWrite});
  rdma_conn_param cp{};
  cp.private_data = priv.data();
  cp.private_data_len = static_cast<uint8_t>(priv.size());
  cp.responder_resources = 1;
  cp.initiator_depth = 1;
  cp.rnr_retry_count = 3;
  if (rdma_accept(conn, &cp) != 0) {
    log << "probe: rdma_accept: " << std::strerror(errno) << "\n";
    return;
  }
  // A client that stops talking is dropped after this long (it may be dead).
  const int idle_ms = std::max(4 * o.timeout_ms, 10000);
  uint64_t served = 0;
  while (true) {
    pollfd fds[2] = {{.fd = ch->fd, .events = POLLIN, .revents = 0},
                     {.fd = (*ep)->compFd(), .events = POLLIN, .revents = 0}};
    const int n = ::poll(fds, 2, idle_ms);
    if (n == 0) {
      log << "probe: client quiet for " << idle_ms << " ms, dropping it\n";
      break;
    }
    if (fds[1].revents & POLLIN) {
      (*ep)->ackCompEvent();
      auto wcs = (*ep)->poll(probe::kProbeClock.now());
      if (!wcs.ok() && wcs.error().msg.starts_with("completion error")) {
        log << "probe: " << wcs.error().msg << "\n";
        break;
      }
      if (wcs.ok()) {
        for (const auto& wc : *wcs) {
          if (wc.opcode != IBV_WC_RECV) continue;
          ++served;
          if (!(*ep)->postRecv().ok() || !(*ep)->postSend(1).ok()) break;
        }
      }
    }
    if (fds[0].revents & POLLIN) {
      auto ev = probe::nextEvent(ch, milliseconds(0));
      if (!ev.ok()) continue;
      if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        (void)rdma_reject(ev->id, nullptr, 0);  // one client at a time
        (void)rdma_destroy_id(ev->id);
        continue;
      }
      if (ev->type == RDMA_CM_EVENT_DISCONNECTED || ev->type == RDMA_CM_EVENT_DEVICE_REMOVAL) break;
    }
  }
  log << "probe: served " << served << " ping-pongs on " << ibv_get_device_name(conn->verbs->device)
      << "\n";
  (void)rdma_disconnect(conn);
  ep->reset();
}

Status runCmServer(const ProbeOptions& o, std::ostream& log) {
  RDMANET_ASSIGN_OR_RETURN(probe::Channel ch, probe::makeChannel());
  rdma_cm_id* raw = nullptr;
  if (rdma_create_id(ch.get(), &raw, nullptr, RDMA_PS_TCP) != 0) {
    return errnoError(ErrorCode::kRdmaFailure, errno, "rdma_create_id");
  }
  CmId listener(raw);
  RDMANET_ASSIGN_OR_RETURN(sockaddr_storage addr,
                           toSockaddr(o.bind.empty() ? "0.0.0.0" : o.bind, o.port));
  if (rdma_bind_addr(listener.get(), reinterpret_cast<sockaddr*>(&addr)) != 0) {
    return errnoError(ErrorCode::kRdmaFailure, errno,
                      fmt::format("rdma_bind_addr({}:{})", o.bind.empty() ? "*" : o.bind, o.port));
  }
  if (rdma_listen(listener.get(), 4) != 0) {
    return errnoError(ErrorCode::kRdmaFailure, errno, "rdma_listen");
  }
  log << "probe: listening on " << (o.bind.empty() ? "*" : o.bind) << ":" << o.port << std::endl;
  while (true) {
    auto ev = probe::nextEvent(ch.get(), hours(24));
    if (!ev.ok()) continue;
    // The device is going away (its driver unbound, a VF reset, `rdma link del`): the kernel
    // waits for every rdma_cm id on it to be destroyed, so a listener that carried on would hold
    // the removal until the process died. It ends here, and the caller's exit says why.
    if (ev->type == RDMA_CM_EVENT_DEVICE_REMOVAL && ev->id == listener.get()) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("the RDMA device under {}:{} was removed",
                                   o.bind.empty() ? "*" : o.bind, o.port));
    }
    if (ev->type != RDMA_CM_EVENT_CONNECT_REQUEST) continue;
    const std::string dev = ibv_get_device_name(ev->id->verbs->device);
    if (!o.device.empty() && dev != o.device) {
      log << "probe: rejecting a connection on " << dev << " (want " << o.device << ")\n";
      (void)rdma_reject(ev->id, nullptr, 0);
      (void)rdma_destroy_id(ev->id);
      continue;
    }
    serve(ch.get(), ev->id, o, log);
    if (o.once) return okStatus();
  }
}

}  // namespace

ProbeReport runProbeClient(const ProbeOptions& o) {
  ProbeReport r = o.exchange == "tcp" ? probe::runExchangeClient(o) : runCmClient(o);
  // The sweep is UDP on the interface, not RDMA: a connection that broke under traffic (ping,
  // write) still has a path to measure, and a lossy path is just when its MTU matters.
  const bool reached =
      r.failed_stage.empty() || r.failed_stage == "ping" || r.failed_stage == "write";
  if (o.mtu_sweep && reached) probe::sweepPathMtu(o, r);
  return r;
}

Status runProbeServer(const ProbeOptions& o, std::ostream& log) {
  // Both exchanges answer the client's MTU sweep, on UDP at the same port.
  RDMANET_ASSIGN_OR_RETURN(auto echo, probe::UdpEcho::start(o.bind, o.port));
  log << "probe: echoing the MTU sweep on udp " << (o.bind.empty() ? "*" : o.bind) << ":" << o.port
      << std::endl;
  return o.exchange == "tcp" ? probe::runExchangeServer(o, log) : runCmServer(o, log);
}

}  // namespace rdmanet::doctor
