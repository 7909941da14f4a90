#include "deviceplugin/grpc_deadline.h"

#include <grpc/support/time.h>

namespace rdmanet::dp {

gpr_timespec grpcSpan(std::chrono::milliseconds d) {
  return gpr_time_from_millis(d.count(), GPR_TIMESPAN);
}

Deadline deadlineOf(const grpc::ServerContext& ctx, const Clock& clock) {
  // What is left of the caller's deadline, measured by gRPC on its clock.
  const gpr_timespec left = gpr_convert_clock_type(ctx.raw_deadline(), GPR_TIMESPAN);
  const std::chrono::nanoseconds rest =
      std::chrono::seconds(left.tv_sec) + std::chrono::nanoseconds(left.tv_nsec);
  if (left.tv_sec == gpr_inf_future(GPR_TIMESPAN).tv_sec || rest > std::chrono::hours(24)) {
    return {};
  }
  return Deadline::in(std::chrono::duration_cast<Clock::duration>(rest), clock);
}

}  // namespace rdmanet::dp
