#pragma once
// FakeKubelet: a stand-in for kubelet's device manager, for tests and the demo.
//
// Like kubelet it serves Registration on <kubelet-dir>/device-plugins/kubelet.sock, checks the
// version and resource name of each Register, then (after answering) dials the plugin's
// endpoint, asks GetDevicePluginOptions and keeps a ListAndWatch stream open. Like kubelet it
// refuses a second Register for a resource whose plugin is still connected ("already
// connected"); one whose stream ended may register again. On request it
// calls GetPreferredAllocation and Allocate, simulates a restart (removes every socket in the
// directory, its own included, and comes back), or refuses registrations.
//
// Everything it sees is reported twice through an EventLog: one JSON object per line
// (machine-readable; every object has "event" and "t_ns", CLOCK_REALTIME nanoseconds) and one
// human-readable line.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace grpc {
class Status;
}

namespace rdmanet::fakekubelet {

class EventLog {
 public:
  EventLog(std::ostream* json, std::ostream* human) : json_(json), human_(human) {}
  // Adds "event" and "t_ns" to `fields` and writes both forms.
  void emit(const std::string& event, nlohmann::json fields, const std::string& human);

 private:
  std::mutex mu_;
  std::ostream* json_;
  std::ostream* human_;
};

struct DeviceView {
  std::string id;
  std::string health;
  std::vector<int64_t> numa;
};

class PluginClient;

class FakeKubelet {
 public:
  FakeKubelet(std::filesystem::path kubelet_dir, EventLog* log);
  ~FakeKubelet();

  // Serves Registration. False (and an "error" event) if the socket cannot be served.
  bool start();
  // Stops serving and drops every plugin connection.
  void stop();
  // Simulates a kubelet restart: stop(), remove every socket in the device-plugins dir, wait
  // `down`, start().
  bool restart(std::chrono::milliseconds down);
  void setRefuse(bool refuse);

  // Waits until `resource` is registered and its first device list arrived.
  bool waitForDevices(const std::string& resource, std::chrono::milliseconds timeout);
  // Waits until a device list of `resource` has `healthy` healthy devices (and `total`
  // devices when total >= 0).
  bool waitForHealthy(const std::string& resource, int healthy, int total,
                      std::chrono::milliseconds timeout);
  std::vector<DeviceView> devices(const std::string& resource);
  std::vector<std::string> resources();

  // The calls kubelet makes; each emits an event with the answer or the gRPC error.
  bool options(const std::string& resource);
  bool preferred(const std::string& resource, std::vector<std::string> available,
                 const std::vector<std::string>& must, int size,
                 std::vector<std::string>* out = nullptr);
  bool allocate(const std::string& resource, const std::vector<std::vector<std::string>>& ids);

  // Called by the Registration service.
  std::string onRegister(const std::string& version, const std::string& endpoint,
                         const std::string& resource, bool preferred_available);

 private:
  std::shared_ptr<PluginClient> client(const std::string& resource);
  bool notRegistered(const std::string& call, const std::string& resource);
  bool callFailed(const std::string& call, const std::string& resource, const grpc::Status& st,
                  nlohmann::json extra = nlohmann::json::object());
  std::filesystem::path socketDir() const;

  std::filesystem::path kubelet_dir_;
  EventLog* log_;
  struct Server;
  std::unique_ptr<Server> server_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<PluginClient>> clients_;
  bool refuse_ = false;
};

}  // namespace rdmanet::fakekubelet
