#pragma once
// The probe's RDMA side: librdmacm connection management and an RC QP (one per connection).
// Internal to the probe; probe.h documents the command.
//
// Wire protocol (both ends are this code): the server accepts with private data
// {u64 addr, u32 rkey, u32 len} naming a buffer the client may RDMA-write; the client then sends
// N 64-byte SENDs, each answered by one 64-byte SEND (the RTT), optionally writes the buffer
// repeatedly (bandwidth), and disconnects.

#include <ostream>

#include "deviceplugin/doctor/probe/probe.h"

namespace rdmanet::doctor {

// Never fails as a whole: a stage that fails is recorded in the report (failed_stage, error).
ProbeReport runProbeClient(const ProbeOptions& o);
// Serves clients one at a time until killed (or one with --once). Errors that end the server
// (bind, listen) are returned; a client that misbehaves or dies is dropped, noted on `log`.
Status runProbeServer(const ProbeOptions& o, std::ostream& log);

}  // namespace rdmanet::doctor
