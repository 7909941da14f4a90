#pragma once
// PluginClient: the fake kubelet's side of one registered plugin: its channel, and the
// ListAndWatch stream read on its own thread (every list is reported as a "devices" event).

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proto/api.grpc.pb.h"
#include "tests/deviceplugin/fake_kubelet/fake_kubelet.h"

namespace rdmanet::fakekubelet {

// "NOT_FOUND" etc.
std::string grpcCodeName(grpc::StatusCode c);
nlohmann::json grpcErrorJson(const grpc::Status& st);

class PluginClient {
 public:
  PluginClient(std::string resource, std::filesystem::path socket, EventLog* log);
  ~PluginClient();

  ::v1beta1::DevicePlugin::Stub& stub() { return *stub_; }
  const std::string& resource() const { return resource_; }
  // Starts the thread: GetDevicePluginOptions, then ListAndWatch until stop().
  void start();
  void stop();
  // Waits for a device list; with healthy >= 0, for one with that many healthy devices (and
  // `total` devices when total >= 0).
  bool waitFor(std::chrono::milliseconds timeout, int healthy, int total);
  std::vector<DeviceView> devices();
  // Neither stopped nor ended (GetDevicePluginOptions or ListAndWatch failing or finishing):
  // kubelet still holds this plugin as connected. True from construction: a client is made
  // only to be started.
  bool connected();

 private:
  void run();

  std::string resource_;
  std::filesystem::path socket_;
  EventLog* log_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::v1beta1::DevicePlugin::Stub> stub_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  grpc::ClientContext* stream_ctx_ = nullptr;
  std::vector<DeviceView> devices_;
  bool got_list_ = false;
  bool stopped_ = false;
  bool ended_ = false;
};

}  // namespace rdmanet::fakekubelet
