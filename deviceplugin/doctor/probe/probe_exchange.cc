// The probe's tcp exchange and MTU sweep (probe_exchange.h).
#include "deviceplugin/doctor/probe/probe_exchange.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "common/base/fd.h"
#include "common/rdma/ibv_verbs.h"
#include "deviceplugin/doctor/probe/exchange_wire.h"
#include "deviceplugin/doctor/probe/probe_host.h"

namespace rdmanet::doctor::probe {
namespace {

using namespace std::chrono;

Error sysError(const std::string& what) { return errnoError(ErrorCode::kRdmaFailure, errno, what); }

int msLeft(Clock::time_point deadline) {
  const auto left = duration_cast<milliseconds>(deadline - kProbeClock.now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// HOST:PORT as a socket address of the given type (numeric or a name getaddrinfo resolves);
// an empty host is the wildcard address.
Result<addrinfo> resolve(const std::string& host, int port, int socktype, sockaddr_storage& ss) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICSERV | (host.empty() ? AI_PASSIVE : 0);
  hints.ai_socktype = socktype;
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;
  addrinfo* res = nullptr;
  const std::string svc = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), svc.c_str(), &hints, &res);
      rc != 0) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("address \"{}\": {}", host, gai_strerror(rc)));
  }
  addrinfo out = *res;
  std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
  out.ai_addr = reinterpret_cast<sockaddr*>(&ss);
  out.ai_next = nullptr;
  out.ai_canonname = nullptr;
  freeaddrinfo(res);
  return out;
}

Status sendAll(int fd, const uint8_t* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    pollfd pfd{.fd = fd, .events = POLLOUT, .revents = 0};
    if (::poll(&pfd, 1, msLeft(deadline)) == 0) {
      return makeError(ErrorCode::kRdmaFailure, "the peer took nothing before the deadline");
    }
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return sysError("sending to the peer");
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return okStatus();
}

Result<std::vector<uint8_t>> recvExact(int fd, size_t n, Clock::time_point deadline) {
  std::vector<uint8_t> b(n);
  size_t got = 0;
  while (got < n) {
    pollfd pfd{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&pfd, 1, msLeft(deadline)) == 0) {
      return makeError(ErrorCode::kRdmaFailure,
                       fmt::format("the peer sent {} of {} bytes before the deadline", got, n));
    }
    const ssize_t r = ::recv(fd, b.data() + got, n - got, 0);
    if (r == 0) {
      return makeError(ErrorCode::kRdmaFailure,
                       fmt::format("the peer closed the connection after {} of {} bytes", got, n));
    }
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return sysError("reading from the peer");
    }
    got += static_cast<size_t>(r);
  }
  return b;
}

Result<Fd> connectTcp(const std::string& host, int port, int timeout_ms) {
  sockaddr_storage ss{};
  RDMANET_ASSIGN_OR_RETURN(addrinfo ai, resolve(host, port, SOCK_STREAM, ss));
  Fd fd(::socket(ai.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return sysError("socket");
  if (::connect(fd.get(), ai.ai_addr, ai.ai_addrlen) != 0 && errno != EINPROGRESS) {
    return sysError(fmt::format("connecting to {}:{}", host, port));
  }
  pollfd pfd{.fd = fd.get(), .events = POLLOUT, .revents = 0};
  if (::poll(&pfd, 1, timeout_ms) == 0) {
    return makeError(ErrorCode::kRdmaFailure,
                     fmt::format("no TCP connection to {}:{} within {} ms (is the probe server "
                                 "listening with --exchange tcp?)",
                                 host, port, timeout_ms));
  }
  int err = 0;
  socklen_t len = sizeof(err);
  (void)::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    errno = err;
    return sysError(fmt::format("connecting to {}:{}", host, port));
  }
  return fd;
}

// The dotted local address of a connected or bound socket.
std::string localAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  } else if (ss.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

// DF on every datagram of `fd`, and no cached path MTU in the way (IP_PMTUDISC_PROBE): a
// datagram above the interface's MTU fails to send, one above the path's is dropped on it.
void setDontFragment(int fd, int family) {
  if (family == AF_INET6) {
    const int v = IPV6_PMTUDISC_PROBE;
    (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, sizeof(v));
  } else {
    const int v = IP_PMTUDISC_PROBE;
    (void)::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));
  }
}

struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
struct ContextDeleter {
  void operator()(ibv_context* c) const { (void)ibv_close_device(c); }
};
using Context = std::unique_ptr<ibv_context, ContextDeleter>;

Result<Context> openDevice(const std::string& name) {
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  if (!list) return sysError("ibv_get_device_list");
  for (int i = 0; i < n; ++i) {
    if (name == ibv_get_device_name(list.get()[i])) {
      Context ctx(ibv_open_device(list.get()[i]));
      if (!ctx) return sysError(fmt::format("opening {} (is its uverbs node in /dev?)", name));
      return ctx;
    }
  }
  return makeError(ErrorCode::kDeviceNotFound, fmt::format("no RDMA device {}", name));
}

// The device, port 1's facts and the GID the QP uses, once they all exist and the port is
// ACTIVE: a device made after the pod starts (Soft-RoCE) is waited for up to --wait-device.
struct Picked {
  std::string device;
  PortFacts port;
  PortGid gid;
};
Result<Picked> waitForDevice(const ProbeOptions& o, const std::string& iface_name) {
  const auto deadline = kProbeClock.now() + seconds(o.wait_device_s);
  const char* hca = std::getenv("NCCL_IB_HCA");
  while (true) {
    Result<Picked> got = [&]() -> Result<Picked> {
      exchange::InterfaceFacts iface{.name = iface_name};
      if (!iface_name.empty()) {
        RDMANET_ASSIGN_OR_RETURN(iface, interfaceFacts(iface_name));
      }
      RDMANET_ASSIGN_OR_RETURN(
          std::string dev, exchange::pickDevice(o.device, hca ? hca : "", rdmaCandidates(), iface));
      IbvRdmaVerbs verbs;
      RDMANET_ASSIGN_OR_RETURN(DeviceFacts facts, verbs.query(dev));
      if (facts.ports.empty()) {
        return makeError(ErrorCode::kDeviceNotFound, fmt::format("{} has no port", dev));
      }
      const PortFacts& port = facts.ports.front();
      if (port.state != "ACTIVE") {
        return makeError(ErrorCode::kDeviceNotFound,
                         fmt::format("{} port {} is {}, not ACTIVE", dev, port.num, port.state));
      }
      RDMANET_ASSIGN_OR_RETURN(PortGid gid, exchange::pickGid(port, o.gid_index, iface.ipv4));
      return Picked{.device = dev, .port = port, .gid = gid};
    }();
    if (got.ok() || kProbeClock.now() >= deadline) return got;
    kProbeClock.sleepFor(milliseconds(500));
  }
}

Result<std::array<uint8_t, 16>> gidBytes(const std::string& text) {
  std::array<uint8_t, 16> out{};
  if (inet_pton(AF_INET6, text.c_str(), out.data()) != 1) {
    return makeError(ErrorCode::kRdmaFailure, fmt::format("GID \"{}\" does not parse", text));
  }
  return out;
}

Status modify(ibv_qp* qp, ibv_qp_attr& a, int mask, const char* state) {
  if (int rc = ibv_modify_qp(qp, &a, mask); rc != 0) {
    errno = rc;
    return sysError(fmt::format("moving the QP to {}", state));
  }
  return okStatus();
}

Status toInit(ibv_qp* qp, int port) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = static_cast<uint8_t>(port);
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  return modify(qp, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
                "INIT");
}

// RTR toward the peer's hello, then RTS; the path MTU the smaller of both ports' active MTUs.
Status toRts(ibv_qp* qp, const exchange::Hello& peer, uint32_t my_psn, int active_mtu,
             int sgid_index, const ProbeOptions& o) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = static_cast<ibv_mtu>(
      std::min<uint32_t>(static_cast<uint32_t>(active_mtu), peer.active_mtu ? peer.active_mtu : 5));
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  std::memcpy(a.ah_attr.grh.dgid.raw, peer.gid.data(), 16);
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(sgid_index);
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.grh.traffic_class = static_cast<uint8_t>(o.effectiveTos());
  a.ah_attr.sl = static_cast<uint8_t>(o.priority);
  a.ah_attr.port_num = 1;
  RDMANET_RETURN_IF_ERROR(modify(qp, a,
                                 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                     IBV_QP_MIN_RNR_TIMER,
                                 "RTR"));
  ibv_qp_attr s{};
  s.qp_state = IBV_QPS_RTS;
  // 4.096 us * 2^16 = 268 ms per try: above any round trip a healthy path has (NCCL's default,
  // 18, is 1 s), so a delay alone retransmits nothing and a loss shows as loss; short enough
  // that a path losing packets still finishes the run.
  s.timeout = 16;
  s.retry_cnt = 7;  // a lost packet is retried (and counted), not fatal
  s.rnr_retry = 7;
  s.sq_psn = my_psn;
  s.max_rd_atomic = 1;
  return modify(qp, s,
                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
                "RTS");
}

uint32_t randomPsn() {
  std::random_device rd;
  return rd() & 0xffffff;
}

int activeMtu(ibv_context* ctx) {
  ibv_port_attr pa{};
  if (ibv_query_port(ctx, 1, &pa) != 0) return IBV_MTU_1024;
  return pa.active_mtu;
}

exchange::Hello helloOf(const Endpoint& ep, uint32_t psn, const std::array<uint8_t, 16>& gid,
                        int netdev_mtu, int active_mtu) {
  return exchange::Hello{.qpn = ep.qp()->qp_num,
                         .psn = psn,
                         .gid = gid,
                         .addr = ep.writeAddr(),
                         .rkey = ep.rkey(),
                         .len = static_cast<uint32_t>(Endpoint::kWrite),
                         .netdev_mtu = static_cast<uint32_t>(netdev_mtu),
                         .active_mtu = static_cast<uint32_t>(active_mtu)};
}

// The traffic class and SL the QP really uses (its address vector), as the cm client reports.
void readQpPath(ibv_qp* qp, ProbeReport& r) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(qp, &attr, IBV_QP_AV, &init) != 0) return;
  r.traffic_class = attr.ah_attr.grh.traffic_class;
  r.sl = attr.ah_attr.sl;
}

// The interface the server's device belongs to: --interface, else the one holding --bind, else
// eth1 when it exists (a pod's rdmanet attachment), else none (then the device rules that need
// no interface decide).
std::string serverInterface(const ProbeOptions& o) {
  if (!o.interface.empty()) return o.interface;
  if (!o.bind.empty()) {
    if (auto i = interfaceOfAddress(o.bind); !i.empty()) return i;
  }
  return interfaceMtu("eth1") > 0 ? "eth1" : "";
}

}  // namespace

ProbeReport runExchangeClient(const ProbeOptions& o) {
  ProbeReport r = clientReport(o);
  const auto step = milliseconds(o.timeout_ms);
  // A server still waiting for its own device (--wait-device) refuses connections: try again
  // until this end's wait is over.
  const auto connect_until = kProbeClock.now() + seconds(o.wait_device_s);
  auto conn = connectTcp(o.peer, o.port, o.timeout_ms);
  while (!conn.ok() && conn.error().sys_errno == ECONNREFUSED &&
         kProbeClock.now() < connect_until) {
    kProbeClock.sleepFor(milliseconds(500));
    conn = connectTcp(o.peer, o.port, o.timeout_ms);
  }
  if (!conn.ok()) return fail(r, "connect", conn.error()), r;
  const std::string iface =
      o.interface.empty() ? interfaceOfAddress(localAddress(conn->get())) : o.interface;
  auto picked = waitForDevice(o, iface);
  if (!picked.ok()) return fail(r, "find device", picked.error()), r;
  // Read once the device is there: whatever set the device up has set the interface up too.
  r.local_mtu = interfaceMtu(iface);
  r.device = picked->device;
  r.port_num = picked->port.num;
  r.gid_index = picked->gid.index;
  r.gid = picked->gid.gid;
  r.port_gbps = picked->port.rate_gbps;
  auto ctx = openDevice(r.device);
  if (!ctx.ok()) return fail(r, "open device", ctx.error()), r;
  auto gid = gidBytes(r.gid);
  if (!gid.ok()) return fail(r, "find device", gid.error()), r;
  const auto counters_before = readHwCounters(r.device, r.port_num);
  auto ep = Endpoint::create(ctx->get());
  if (!ep.ok()) return fail(r, "create qp", ep.error()), r;
  if (auto s = toInit((*ep)->qp(), r.port_num); !s.ok()) return fail(r, "create qp", s.error()), r;
  const uint32_t psn = randomPsn();
  const int active = activeMtu(ctx->get());
  const auto mine = exchange::encodeHello(helloOf(**ep, psn, *gid, r.local_mtu, active));
  if (auto s = sendAll(conn->get(), mine.data(), mine.size(), kProbeClock.now() + step); !s.ok()) {
    return fail(r, "exchange", s.error()), r;
  }
  auto theirs_bytes = recvExact(conn->get(), exchange::kHelloBytes, kProbeClock.now() + step);
  if (!theirs_bytes.ok()) return fail(r, "exchange", theirs_bytes.error()), r;
  auto theirs = exchange::decodeHello(*theirs_bytes);
  if (!theirs.ok()) return fail(r, "exchange", theirs.error()), r;
  r.peer_mtu = static_cast<int>(theirs->netdev_mtu);
  if (auto s = toRts((*ep)->qp(), *theirs, psn, active, r.gid_index, o); !s.ok()) {
    return fail(r, "connect", s.error()), r;
  }
  // Ready: the server's QP is in RTR with receives posted once its "R" arrives.
  const uint8_t ready = 'R';
  if (auto s = sendAll(conn->get(), &ready, 1, kProbeClock.now() + step); !s.ok()) {
    return fail(r, "exchange", s.error()), r;
  }
  if (auto b = recvExact(conn->get(), 1, kProbeClock.now() + step); !b.ok() || (*b)[0] != 'R') {
    return fail(r, "exchange",
                b.ok() ? makeError(ErrorCode::kRdmaFailure, "the server did not say ready")
                       : b.error()),
           r;
  }
  readQpPath((*ep)->qp(), r);
  const WriteTarget target{.addr = theirs->addr, .rkey = theirs->rkey, .len = theirs->len};
  if (pingPong(**ep, o, r) && o.bandwidth) writeBandwidth(**ep, target, o, r);
  const uint8_t done = 'D';
  (void)sendAll(conn->get(), &done, 1, kProbeClock.now() + milliseconds(1000));
  r.counters_delta = counterGrowth(counters_before, readHwCounters(r.device, r.port_num));
  return r;
}

namespace {

// One client of the tcp exchange, start to end. Errors end this client only.
Status serveClient(int fd, ibv_context* ctx, const Picked& dev, int netdev_mtu,
                   const ProbeOptions& o, std::ostream& log) {
  const auto step = milliseconds(o.timeout_ms);
  RDMANET_ASSIGN_OR_RETURN(auto ep, Endpoint::create(ctx));
  RDMANET_RETURN_IF_ERROR(toInit(ep->qp(), dev.port.num));
  for (int i = 0; i < 32; ++i) RDMANET_RETURN_IF_ERROR(ep->postRecv());
  RDMANET_ASSIGN_OR_RETURN(auto theirs_bytes,
                           recvExact(fd, exchange::kHelloBytes, kProbeClock.now() + step));
  RDMANET_ASSIGN_OR_RETURN(exchange::Hello theirs, exchange::decodeHello(theirs_bytes));
  RDMANET_ASSIGN_OR_RETURN(auto gid, gidBytes(dev.gid.gid));
  const uint32_t psn = randomPsn();
  const int active = activeMtu(ctx);
  const auto mine = exchange::encodeHello(helloOf(*ep, psn, gid, netdev_mtu, active));
  RDMANET_RETURN_IF_ERROR(toRts(ep->qp(), theirs, psn, active, dev.gid.index, o));
  RDMANET_RETURN_IF_ERROR(sendAll(fd, mine.data(), mine.size(), kProbeClock.now() + step));
  RDMANET_ASSIGN_OR_RETURN(auto ready, recvExact(fd, 1, kProbeClock.now() + step));
  if (ready[0] != 'R') return makeError(ErrorCode::kRdmaFailure, "the client did not say ready");
  const uint8_t r = 'R';
  RDMANET_RETURN_IF_ERROR(sendAll(fd, &r, 1, kProbeClock.now() + step));
  // A client that stops talking is dropped after this long (it may be dead).
  const int idle_ms = std::max(4 * o.timeout_ms, 10000);
  uint64_t served = 0;
  while (true) {
    pollfd fds[2] = {{.fd = fd, .events = POLLIN, .revents = 0},
                     {.fd = ep->compFd(), .events = POLLIN, .revents = 0}};
    if (::poll(fds, 2, idle_ms) == 0) {
      log << "probe: client quiet for " << idle_ms << " ms, dropping it\n";
      break;
    }
    if (fds[1].revents & POLLIN) {
      ep->ackCompEvent();
      auto wcs = ep->poll(kProbeClock.now());
      if (!wcs.ok() && wcs.error().msg.starts_with("completion error")) return wcs.error();
      if (wcs.ok()) {
        for (const auto& wc : *wcs) {
          if (wc.opcode != IBV_WC_RECV) continue;
          ++served;
          RDMANET_RETURN_IF_ERROR(ep->postRecv());
          RDMANET_RETURN_IF_ERROR(ep->postSend(1));
        }
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) break;  // "D", or the client went away
  }
  log << "probe: served " << served << " ping-pongs on " << dev.device << std::endl;
  return okStatus();
}

}  // namespace

Status runExchangeServer(const ProbeOptions& o, std::ostream& log) {
  const std::string iface = serverInterface(o);
  RDMANET_ASSIGN_OR_RETURN(Picked dev, waitForDevice(o, iface));
  RDMANET_ASSIGN_OR_RETURN(Context ctx, openDevice(dev.device));
  sockaddr_storage ss{};
  RDMANET_ASSIGN_OR_RETURN(addrinfo ai, resolve(o.bind, o.port, SOCK_STREAM, ss));
  Fd listener(::socket(ai.ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) return sysError("socket");
  const int one = 1;
  (void)::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listener.get(), ai.ai_addr, ai.ai_addrlen) != 0) {
    return sysError(fmt::format("binding tcp {}:{}", o.bind.empty() ? "*" : o.bind, o.port));
  }
  if (::listen(listener.get(), 4) != 0) return sysError("listen");
  log << "probe: listening on tcp " << (o.bind.empty() ? "*" : o.bind) << ":" << o.port << " with "
      << dev.device << " GID " << dev.gid.index << " (" << dev.gid.gid << ")" << std::endl;
  while (true) {
    Fd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (client.get() < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return sysError("accept");
    }
    if (auto s = serveClient(client.get(), ctx.get(), dev, interfaceMtu(iface), o, log); !s.ok()) {
      log << "probe: client dropped: " << s.error().msg << std::endl;
    }
    if (o.once) return okStatus();
  }
}

Result<std::unique_ptr<UdpEcho>> UdpEcho::start(const std::string& bind, int port) {
  sockaddr_storage ss{};
  RDMANET_ASSIGN_OR_RETURN(addrinfo ai, resolve(bind, port, SOCK_DGRAM, ss));
  Fd fd(::socket(ai.ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return sysError("socket");
  // Echoes go out with DF too: a reply larger than this end's path is dropped, not fragmented.
  setDontFragment(fd.get(), ai.ai_family);
  if (::bind(fd.get(), ai.ai_addr, ai.ai_addrlen) != 0) {
    return sysError(fmt::format("binding udp {}:{}", bind.empty() ? "*" : bind, port));
  }
  return std::unique_ptr<UdpEcho>(new UdpEcho(std::move(fd)));
}

UdpEcho::UdpEcho(Fd fd) : fd_(std::move(fd)) {
  thread_ = std::thread([this] {
    std::vector<uint8_t> buf(65536);
    while (!stop_.load()) {
      pollfd pfd{.fd = fd_.get(), .events = POLLIN, .revents = 0};
      if (::poll(&pfd, 1, 200) <= 0) continue;
      sockaddr_storage from{};
      socklen_t len = sizeof(from);
      const ssize_t n = ::recvfrom(fd_.get(), buf.data(), buf.size(), 0,
                                   reinterpret_cast<sockaddr*>(&from), &len);
      if (n > 0) {
        (void)::sendto(fd_.get(), buf.data(), static_cast<size_t>(n), 0,
                       reinterpret_cast<sockaddr*>(&from), len);
      }
    }
  });
}

UdpEcho::~UdpEcho() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void sweepPathMtu(const ProbeOptions& o, ProbeReport& r) {
  r.mtu_run = true;
  sockaddr_storage ss{};
  auto ai = resolve(o.peer, o.port, SOCK_DGRAM, ss);
  if (!ai.ok()) return;
  Fd fd(::socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0 || ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) return;
  const bool v6 = ai->ai_family == AF_INET6;
  setDontFragment(fd.get(), ai->ai_family);
  const int overhead = v6 ? 48 : 28;  // IP and UDP headers: sizes below are whole IP packets
  if (r.local_mtu == 0) r.local_mtu = interfaceMtu(interfaceOfAddress(localAddress(fd.get())));
  const int top = r.local_mtu > 0 ? r.local_mtu : 9000;
  std::vector<uint8_t> out(static_cast<size_t>(top)), in(65536);
  uint32_t nonce = randomPsn();
  // One size crosses when a datagram of it comes back within 300 ms, in 6 tries: a path that
  // loses 20 % of its packets one way must not pass for a small MTU (0.8^6 of a chance).
  const auto crosses = [&](int size) {
    for (int attempt = 0; attempt < 6; ++attempt) {
      ++nonce;
      std::memcpy(out.data(), &nonce, sizeof(nonce));
      const size_t len = static_cast<size_t>(size - overhead);
      if (::send(fd.get(), out.data(), len, 0) < 0) return false;  // EMSGSIZE: above our MTU
      const auto deadline = kProbeClock.now() + milliseconds(300);
      while (true) {
        pollfd pfd{.fd = fd.get(), .events = POLLIN, .revents = 0};
        if (::poll(&pfd, 1, msLeft(deadline)) <= 0) break;
        const ssize_t n = ::recv(fd.get(), in.data(), in.size(), 0);
        if (n == static_cast<ssize_t>(len) && std::memcmp(in.data(), &nonce, sizeof(nonce)) == 0) {
          return true;
        }
      }
    }
    return false;
  };
  // The common case first: the whole MTU crosses, one datagram.
  std::optional<int> path = crosses(top)
                                ? std::optional<int>(top)
                                : exchange::largestCrossing(overhead + 64, top - 1, crosses);
  r.path_mtu = path.value_or(0);
  r.roce_mtu = r.path_mtu > 0 ? roceMtuForNetdevMtu(r.path_mtu) : 0;
}

}  // namespace rdmanet::doctor::probe
