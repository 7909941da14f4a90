#pragma once
// Deadlines across the gRPC boundary. rdmanet measures a Deadline on the injected Clock
// (common/base/deadline.h); gRPC measures its own on its own clock. They meet only here, as a
// time span: what is left of ours becomes a span gRPC counts from its own now, and what is left of
// a caller's gRPC deadline becomes a Deadline on our clock. So no code of ours reads the wall
// clock to talk to gRPC, and a FakeClock in tests moves the deadlines gRPC is given.

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "common/base/clock.h"
#include "common/base/deadline.h"

namespace rdmanet::dp {

// `d` from gRPC's now, for ClientContext::set_deadline and Server::Shutdown (a gpr_timespec of
// GPR_TIMESPAN: gRPC adds its own now to it).
gpr_timespec grpcSpan(std::chrono::milliseconds d);

// The calling client's deadline on `clock`; none when it set none (gRPC then reports the far
// future).
Deadline deadlineOf(const grpc::ServerContext& ctx, const Clock& clock);

}  // namespace rdmanet::dp
