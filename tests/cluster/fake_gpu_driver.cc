// The DRA test's second driver: the kubelet side of a GPU driver, for the simulated node's
// GPUs, so that the real scheduler can pair a GPU with an rdmanet NIC under
// `matchAttribute: resource.kubernetes.io/pcieRoot` and kubelet can prepare such a claim.
//
//   fake_gpu_driver --driver NAME --kubelet-dir DIR
//
// It registers with kubelet's plugin watcher (DIR/plugins_registry/NAME-reg.sock, rdmanet's own
// registration server) and serves DRAPlugin v1 on DIR/plugins/NAME/dra.sock until SIGTERM or
// SIGINT. Prepare answers every claim with no CDI devices: a fake GPU has nothing to inject. The
// test publishes the GPUs' ResourceSlice itself (tests/cluster/dra.sh), from the simulated
// node's sysfs tree: what matters to the scheduler is the slice, and to kubelet that the driver
// answers.
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <string>

#include "deviceplugin/dra/kubelet/grpc_dra_server.h"
#include "deviceplugin/grpc_unix_server.h"
#include "proto/kubelet/dra/v1/api.grpc.pb.h"

namespace {

namespace fs = std::filesystem;
namespace dra = ::k8s::io::kubelet::pkg::apis::dra::v1;

class FakeGpuPlugin final : public dra::DRAPlugin::Service {
 public:
  grpc::Status NodePrepareResources(grpc::ServerContext*,
                                    const dra::NodePrepareResourcesRequest* req,
                                    dra::NodePrepareResourcesResponse* out) override {
    for (const dra::Claim& c : req->claims()) {
      (*out->mutable_claims())[c.uid()];  // prepared, no devices to inject
      spdlog::info("prepared {}/{} ({})", c.namespace_(), c.name(), c.uid());
    }
    return grpc::Status::OK;
  }
  grpc::Status NodeUnprepareResources(grpc::ServerContext*,
                                      const dra::NodeUnprepareResourcesRequest* req,
                                      dra::NodeUnprepareResourcesResponse* out) override {
    for (const dra::Claim& c : req->claims()) {
      (*out->mutable_claims())[c.uid()];
      spdlog::info("unprepared {}/{} ({})", c.namespace_(), c.name(), c.uid());
    }
    return grpc::Status::OK;
  }
};

int fatal(const std::string& msg) {
  spdlog::error("{}", msg);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The real-cluster DRA test's fake GPU driver (kubelet side)."};
  std::string driver;
  fs::path kubelet_dir;
  app.add_option("--driver", driver, "the DRA driver name")->required();
  app.add_option("--kubelet-dir", kubelet_dir, "kubelet's --root-dir")->required();
  CLI11_PARSE(app, argc, argv);

  // Both signals are waited for below, not handled: blocked before any thread starts.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  const fs::path plugin_dir = kubelet_dir / "plugins" / driver;
  const fs::path registry = kubelet_dir / "plugins_registry";
  std::error_code ec;
  fs::create_directories(plugin_dir, ec);
  if (ec) return fatal("cannot create " + plugin_dir.string() + ": " + ec.message());
  if (!fs::is_directory(registry)) return fatal(registry.string() + " is not kubelet's");

  FakeGpuPlugin plugin;
  const fs::path dra_socket = plugin_dir / "dra.sock";
  auto server = rdmanet::dp::startUnixServer(dra_socket, {&plugin});
  if (!server.ok()) return fatal(server.error().msg);
  auto registration = rdmanet::dp::serveRegistration(
      registry / (driver + "-reg.sock"), {.name = driver, .endpoint = dra_socket.string()},
      [&](bool registered, const std::string& error) {
        if (registered) {
          spdlog::info("registered with kubelet as {}", driver);
        } else {
          spdlog::error("kubelet refused {}: {}", driver, error);
        }
      });
  if (!registration.ok()) return fatal(registration.error().msg);
  spdlog::info("serving {} on {}", driver, dra_socket.string());

  int sig = 0;
  sigwait(&stop, &sig);
  (*registration)->stop();
  rdmanet::dp::stopUnixServer(*server, dra_socket);
  return 0;
}
