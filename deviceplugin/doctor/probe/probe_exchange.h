#pragma once
// The probe's tcp exchange (probe.h, --exchange tcp) and its MTU sweep. Internal to the probe.
//
// Connection: the client opens TCP to the server's port on the interface; each end sends its
// hello (exchange_wire.h: QP number, PSN, GID, write buffer, MTUs) and brings its RC QP to RTS
// toward the other's, the path MTU the smaller of the two ports' active MTUs, the GRH's traffic
// class the TOS; then each sends one byte "R" (ready: its QP is in RTR with receives posted), and
// the client runs the same ping-pong and write phases as over rdma_cm. It sends "D" when done;
// the server then drops the QP and serves the next client.
//
// MTU sweep: the server echoes every UDP datagram on its port back to its sender. The client
// sends datagrams of a given IP size with DF set (IP_PMTUDISC_PROBE: no fragmenting, and no
// cached path MTU in the way) and finds the largest that comes back, within its interface's MTU.

#include <atomic>
#include <memory>
#include <ostream>
#include <string>
#include <thread>

#include "common/base/fd.h"
#include "common/base/result.h"
#include "deviceplugin/doctor/probe/probe.h"
#include "deviceplugin/doctor/probe/rdma_cm_util.h"

namespace rdmanet::doctor::probe {

// Shared by both exchanges (probe_rdma.cc): record a failed stage (always false); the
// ping-pong; the RDMA-write phase against the server's buffer.
bool fail(ProbeReport& r, const std::string& stage, const Error& e);
bool pingPong(Endpoint& ep, const ProbeOptions& o, ProbeReport& r);
bool writeBandwidth(Endpoint& ep, const WriteTarget& t, const ProbeOptions& o, ProbeReport& r);

ProbeReport runExchangeClient(const ProbeOptions& o);
Status runExchangeServer(const ProbeOptions& o, std::ostream& log);

// The server's UDP echo, on a thread of its own until destroyed.
class UdpEcho {
 public:
  static Result<std::unique_ptr<UdpEcho>> start(const std::string& bind, int port);
  ~UdpEcho();
  UdpEcho(const UdpEcho&) = delete;
  UdpEcho& operator=(const UdpEcho&) = delete;

 private:
  explicit UdpEcho(Fd fd);
  Fd fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Sets r.path_mtu, r.roce_mtu, r.mtu_run (and r.local_mtu when unknown) by sweeping to o.peer.
void sweepPathMtu(const ProbeOptions& o, ProbeReport& r);

}  // namespace rdmanet::doctor::probe
