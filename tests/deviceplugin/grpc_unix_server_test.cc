// A gRPC handler that throws (deviceplugin/grpc_unix_server.h): the call is answered UNKNOWN, the
// log names the method, and the server goes on serving, on a real unix socket.
#include "deviceplugin/grpc_unix_server.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "deviceplugin/logging.h"
#include "proto/kubelet/pluginregistration/v1/api.grpc.pb.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

namespace reg = ::pluginregistration;

// Throws on every other GetInfo call.
class FlakyRegistration final : public reg::Registration::Service {
 public:
  grpc::Status GetInfo(grpc::ServerContext*, const reg::InfoRequest*,
                       reg::PluginInfo* out) override {
    if (calls_++ % 2 == 0) throw std::runtime_error("a name it could not encode");
    out->set_name("flaky");
    return grpc::Status::OK;
  }
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*, const reg::RegistrationStatus*,
                                        reg::RegistrationStatusResponse*) override {
    return grpc::Status::OK;
  }

 private:
  std::atomic<int> calls_{0};
};

TEST(GrpcUnixServerTest, AHandlerThatThrowsIsLoggedAndTheServerGoesOn) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  logger(Component::kServer)->sinks().push_back(sink);
  const auto dir = testing::makeTempDir("grpc-throw");
  const auto socket = dir / "s.sock";
  FlakyRegistration service;
  auto server = startUnixServer(socket, {&service});
  ASSERT_TRUE(server.ok()) << server.error().msg;
  auto stub = reg::Registration::NewStub(
      grpc::CreateChannel("unix:" + socket.string(), grpc::InsecureChannelCredentials()));
  for (int i = 0; i < 4; ++i) {
    grpc::ClientContext ctx;
    reg::PluginInfo info;
    const grpc::Status st = stub->GetInfo(&ctx, reg::InfoRequest(), &info);
    if (i % 2 == 0) {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::UNKNOWN) << i;
    } else {
      EXPECT_TRUE(st.ok()) << i << ": " << st.error_message();
      EXPECT_EQ(info.name(), "flaky");
    }
  }
  stopUnixServer(*server, socket);
  auto& sinks = logger(Component::kServer)->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
  const std::string text = log.str();
  EXPECT_NE(text.find("gRPC /pluginregistration.Registration/GetInfo: the handler threw"),
            std::string::npos)
      << text;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmanet::dp
