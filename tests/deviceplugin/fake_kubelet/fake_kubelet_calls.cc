// The calls kubelet makes on a registered plugin, each reported as an event.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "proto/api.grpc.pb.h"
#include "tests/deviceplugin/fake_kubelet/fake_kubelet.h"
#include "tests/deviceplugin/fake_kubelet/plugin_client.h"

namespace rdmanet::fakekubelet {

namespace pb = ::v1beta1;

namespace {

std::unique_ptr<grpc::ClientContext> callContext() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return ctx;
}

std::string join(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ",")); }

}  // namespace

bool FakeKubelet::options(const std::string& resource) {
  auto c = client(resource);
  if (!c) return notRegistered("options", resource);
  pb::DevicePluginOptions out;
  auto ctx = callContext();
  grpc::Status st = c->stub().GetDevicePluginOptions(ctx.get(), pb::Empty(), &out);
  if (!st.ok()) return callFailed("options", resource, st);
  log_->emit("options",
             {{"resource", resource},
              {"ok", true},
              {"pre_start_required", out.pre_start_required()},
              {"get_preferred_allocation_available", out.get_preferred_allocation_available()}},
             fmt::format("{}: preStartRequired={} getPreferredAllocationAvailable={}", resource,
                         out.pre_start_required(), out.get_preferred_allocation_available()));
  return true;
}

bool FakeKubelet::preferred(const std::string& resource, std::vector<std::string> available,
                            const std::vector<std::string>& must, int size,
                            std::vector<std::string>* chosen) {
  auto c = client(resource);
  if (!c) return notRegistered("prefer", resource);
  if (available.empty()) {
    for (const auto& d : c->devices()) {
      if (d.health == "Healthy") available.push_back(d.id);
    }
  }
  pb::PreferredAllocationRequest req;
  auto* cr = req.add_container_requests();
  for (const auto& id : available) cr->add_available_deviceids(id);
  for (const auto& id : must) cr->add_must_include_deviceids(id);
  cr->set_allocation_size(size);
  pb::PreferredAllocationResponse out;
  auto ctx = callContext();
  grpc::Status st = c->stub().GetPreferredAllocation(ctx.get(), req, &out);
  if (!st.ok()) return callFailed("prefer", resource, st);
  std::vector<std::string> ids;
  if (out.container_responses_size() > 0) {
    for (const auto& id : out.container_responses(0).deviceids()) ids.push_back(id);
  }
  log_->emit(
      "prefer",
      {{"resource", resource},
       {"ok", true},
       {"size", size},
       {"must", must},
       {"available", available.size()},
       {"device_ids", ids}},
      fmt::format("{}: preferred {} of {}: {}", resource, size, available.size(), join(ids)));
  if (chosen) *chosen = std::move(ids);
  return true;
}

bool FakeKubelet::allocate(const std::string& resource,
                           const std::vector<std::vector<std::string>>& containers) {
  auto c = client(resource);
  if (!c) return notRegistered("allocate", resource);
  pb::AllocateRequest req;
  for (const auto& ids : containers) {
    auto* cr = req.add_container_requests();
    for (const auto& id : ids) cr->add_devices_ids(id);
  }
  pb::AllocateResponse out;
  auto ctx = callContext();
  grpc::Status st = c->stub().Allocate(ctx.get(), req, &out);
  nlohmann::json asked = containers;
  if (!st.ok()) return callFailed("allocate", resource, st, {{"request", asked}});
  nlohmann::json resps = nlohmann::json::array();
  std::string human;
  for (const auto& r : out.container_responses()) {
    nlohmann::json envs = nlohmann::json::object(), devs = nlohmann::json::array(),
                   cdi = nlohmann::json::array();
    for (const auto& [k, v] : r.envs()) envs[k] = v;
    for (const auto& d : r.devices()) {
      devs.push_back({{"container_path", d.container_path()},
                      {"host_path", d.host_path()},
                      {"permissions", d.permissions()}});
      human += " " + d.host_path();
    }
    for (const auto& d : r.cdi_devices()) cdi.push_back(d.name());
    nlohmann::json mounts = nlohmann::json::array();
    for (const auto& m : r.mounts()) {
      mounts.push_back({{"container_path", m.container_path()},
                        {"host_path", m.host_path()},
                        {"read_only", m.read_only()}});
    }
    resps.push_back({{"envs", envs}, {"devices", devs}, {"cdi_devices", cdi}, {"mounts", mounts}});
  }
  log_->emit("allocate",
             {{"resource", resource}, {"ok", true}, {"request", asked}, {"responses", resps}},
             fmt::format("{}: allocated {} -> devices:{}", resource, asked.dump(), human));
  return true;
}

bool FakeKubelet::notRegistered(const std::string& call, const std::string& resource) {
  log_->emit(call,
             {{"resource", resource},
              {"ok", false},
              {"error", {{"code", "NOT_REGISTERED"}, {"message", "no such plugin"}}}},
             fmt::format("{}: {} is not registered", call, resource));
  return false;
}

bool FakeKubelet::callFailed(const std::string& call, const std::string& resource,
                             const grpc::Status& st, nlohmann::json extra) {
  extra["resource"] = resource;
  extra["ok"] = false;
  extra["error"] = {{"code", grpcCodeName(st.error_code())}, {"message", st.error_message()}};
  log_->emit(call, extra,
             fmt::format("{}: {} failed: {} {}", resource, call, grpcCodeName(st.error_code()),
                         st.error_message()));
  return false;
}

}  // namespace rdmanet::fakekubelet
