// Deadlines across the gRPC boundary (deviceplugin/grpc_deadline.h), through a real server on a
// unix socket: what is left of a caller's deadline arrives as a Deadline on the injected clock,
// and a span handed to gRPC is counted from gRPC's own now.
#include "deviceplugin/grpc_deadline.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <optional>

#include "deviceplugin/grpc_unix_server.h"
#include "deviceplugin/kubelet_client.h"
#include "proto/kubelet/pluginregistration/v1/api.grpc.pb.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp {
namespace {

namespace reg = ::pluginregistration;
using namespace std::chrono_literals;

// Records the deadline of each GetInfo, on the test's clock.
class DeadlineRecorder final : public reg::Registration::Service {
 public:
  explicit DeadlineRecorder(const Clock& clock) : clock_(clock) {}
  grpc::Status GetInfo(grpc::ServerContext* ctx, const reg::InfoRequest*,
                       reg::PluginInfo*) override {
    std::lock_guard lk(mu_);
    last_ = deadlineOf(*ctx, clock_);
    return grpc::Status::OK;
  }
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*, const reg::RegistrationStatus*,
                                        reg::RegistrationStatusResponse*) override {
    return grpc::Status::OK;
  }
  std::optional<Deadline> last() const {
    std::lock_guard lk(mu_);
    return last_;
  }

 private:
  const Clock& clock_;
  mutable std::mutex mu_;
  std::optional<Deadline> last_;
};

class GrpcDeadlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = startUnixServer(socket_, {&service_});
    ASSERT_TRUE(s.ok()) << s.error().msg;
    server_ = std::move(*s);
    stub_ = reg::Registration::NewStub(
        grpc::CreateChannel("unix:" + socket_.string(), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    stopUnixServer(server_, socket_);
    std::filesystem::remove_all(dir_);
  }

  rdmanet::testing::FakeClock clock_;  // stands still: what is left is what the caller gave
  DeadlineRecorder service_{clock_};
  const std::filesystem::path dir_ = testing::makeTempDir("grpc-deadline");
  const std::filesystem::path socket_ = dir_ / "s.sock";
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<reg::Registration::Stub> stub_;
};

TEST_F(GrpcDeadlineTest, ACallersDeadlineArrivesAsWhatIsLeftOfItOnTheInjectedClock) {
  grpc::ClientContext ctx;
  setDeadlineIn(ctx, 30s);
  reg::PluginInfo info;
  ASSERT_TRUE(stub_->GetInfo(&ctx, reg::InfoRequest(), &info).ok());
  const auto d = service_.last();
  ASSERT_TRUE(d.has_value() && d->at.has_value());
  const auto left = *d->at - clock_.now();
  // gRPC's wire encoding of the timeout (grpc-timeout) rounds it up a little; the call's own
  // way there takes a little of it.
  EXPECT_LE(left, 31s);
  EXPECT_GT(left, 20s);
  EXPECT_FALSE(d->passed(clock_));
  clock_.advance(31s);
  EXPECT_TRUE(d->passed(clock_));
}

TEST_F(GrpcDeadlineTest, ACallWithoutADeadlineHasNone) {
  grpc::ClientContext ctx;
  reg::PluginInfo info;
  ASSERT_TRUE(stub_->GetInfo(&ctx, reg::InfoRequest(), &info).ok());
  const auto d = service_.last();
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->at.has_value());
}

// gRPC's own deadline is real time, so real time is what this looks at: a span taken as a point
// in time would end at once (1970), not 200 ms on.
TEST_F(GrpcDeadlineTest, ASpanGivenToGrpcCountsFromItsNow) {
  auto stub = reg::Registration::NewStub(grpc::CreateChannel(
      "unix:" + (dir_ / "nobody.sock").string(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(true);  // waits for a server that never comes, until the deadline
  ctx.set_deadline(grpcSpan(200ms));
  reg::PluginInfo info;
  const SteadyClock real;
  const auto t0 = real.now();
  const grpc::Status st = stub->GetInfo(&ctx, reg::InfoRequest(), &info);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  EXPECT_GE(real.now() - t0, 190ms);
}

}  // namespace
}  // namespace rdmanet::dp
