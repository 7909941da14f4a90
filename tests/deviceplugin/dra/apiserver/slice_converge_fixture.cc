#include "tests/deviceplugin/dra/apiserver/slice_converge_fixture.h"

#include <functional>
#include <map>
#include <thread>

#include "common/base/sysfs.h"
#include "deviceplugin/dra/apiserver/slice_builder.h"
#include "deviceplugin/pools/node_pools.h"
#include "tests/fakes/eventually.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr int kVfsPerPf = 9;  // the scaling node's 8 PFs: 72 VFs

const sim::ScaleTree& tree() { return sim::sharedScaleTree(sim::ScaleShape::kMlx5, kVfsPerPf); }

// The scaling node's pools and DRA devices, scanned once per process (the tree never changes).
const DeviceSnapshot& fullNode() {
  static const DeviceSnapshot snap = [] {
    Sysfs sysfs(tree().root());
    NodePools core(sysfs, defaultConfig());
    core.rescan();
    DeviceSnapshot s;
    s.pools = core.build().pools;
    s.devices = nodeDevices(s.pools);
    return s;
  }();
  return snap;
}

// Polls `pred` every millisecond of real time; false after 10 s.
bool waitFor(const std::function<bool()>& pred) {
  return rdmanet::testing::eventually(pred, 10s, 1ms);
}

}  // namespace

void SliceConvergeTest::SetUp() {
  if (!api_.ok()) GTEST_SKIP() << api_.error();
  node_uid_ = api_.createNode(kNode);
  ASSERT_FALSE(node_uid_.empty());
  // The daemon's client (dra_wiring.cc) with its retries, but their waits on a clock that steps
  // through them at once: the waits under test are the worker's, on the fake clock.
  worker_client_ = std::make_unique<kube::KubeClient>(
      api_.config(),
      kube::ClientOptions{.retry = {}, .clock = &client_clock_, .user_agent = kWorkerAgent});
  client_ = std::make_unique<kube::KubeClient>(api_.config(),
                                               kube::ClientOptions{.retry = {.max_attempts = 1}});
  worker_ = std::make_unique<SliceWorker>(
      *worker_client_, dra::PublisherOptions{.node_name = kNode}, tree().root(), clock_);
}

void SliceConvergeTest::TearDown() { worker_.reset(); }

std::shared_ptr<const DeviceSnapshot> SliceConvergeTest::snapshot(int vfs) {
  auto s = std::make_shared<DeviceSnapshot>();
  s->version = ++version_;
  s->pools = fullNode().pools;
  for (const NodeDevice& d : fullNode().devices) {
    if (d.device.vf_index && static_cast<int>(s->devices.size()) < vfs) s->devices.push_back(d);
  }
  EXPECT_EQ(static_cast<int>(s->devices.size()), vfs) << "the scaling node has fewer VFs";
  return s;
}

void SliceConvergeTest::hand(std::shared_ptr<const DeviceSnapshot> snap) {
  const int before = worker_->status().attempts;
  worker_->publish(std::move(snap), false);
  ASSERT_TRUE(waitFor([&] { return worker_->status().attempts > before && clock_.idle(); }))
      << "the worker did not try the snapshot";
}

bool SliceConvergeTest::advance(std::chrono::milliseconds d, std::chrono::milliseconds step) {
  for (std::chrono::milliseconds done{0}; done < d; done += step) {
    clock_.advance(step);
    if (!waitFor([&] { return clock_.idle(); })) {
      ADD_FAILURE() << "the worker did not sleep again";
      return false;
    }
  }
  return true;
}

std::optional<std::chrono::milliseconds> SliceConvergeTest::stepUntilExact(
    const DeviceSnapshot& snap, std::chrono::milliseconds limit) {
  for (std::chrono::milliseconds t{0}; t <= limit; t += 100ms) {
    if (exact(snap)) return t;
    if (!advance(100ms)) return std::nullopt;
  }
  return std::nullopt;
}

json SliceConvergeTest::slices() {
  auto l = client_->list(kSlices, {.field_selector = fmt::format("spec.nodeName={},spec.driver={}",
                                                                 kNode, dra::kDefaultDriverName)});
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().msg);
  return l.ok() ? (*l)["items"] : json::array();
}

std::string SliceConvergeTest::inexact(const DeviceSnapshot& snap) {
  std::set<std::string> want;
  for (const NodeDevice& d : snap.devices) want.insert(d.name);
  const json all = slices();
  std::set<std::string> have;
  std::set<int64_t> gens;
  for (const json& s : all) {
    const json& pool = s["spec"]["pool"];
    if (pool["name"] != kNode) return fmt::format("a slice of pool {}", pool["name"].dump());
    if (pool["resourceSliceCount"] != all.size()) {
      return fmt::format("resourceSliceCount {} with {} slices", pool["resourceSliceCount"].dump(),
                         all.size());
    }
    gens.insert(pool["generation"].get<int64_t>());
    for (const json& d : s["spec"].value("devices", json::array())) {
      if (!have.insert(d["name"].get<std::string>()).second) {
        return fmt::format("{} twice", d["name"].dump());
      }
    }
  }
  if (gens.size() > 1) return fmt::format("{} generations", gens.size());
  if (have != want) return fmt::format("{} devices published, {} wanted", have.size(), want.size());
  return "";
}

std::set<int64_t> SliceConvergeTest::generations() {
  std::set<int64_t> out;
  for (const json& s : slices()) {
    if (s["spec"]["pool"]["name"] == kNode)
      out.insert(s["spec"]["pool"]["generation"].get<int64_t>());
  }
  return out;
}

void SliceConvergeTest::writeForeignSlice(const std::string& pool, int devices,
                                          int64_t generation) {
  std::vector<dra::DraDevice> devs;
  for (int i = 0; i < devices; ++i) {
    devs.push_back({.name = fmt::format("pci-0000-99-00-{}", i), .attributes = {}});
  }
  auto built = dra::buildSlices(devs, {.node_name = kNode, .node_uid = node_uid_}, generation);
  ASSERT_TRUE(built.ok()) << built.error().msg;
  json s = (*built)[0];
  s["spec"]["pool"]["name"] = pool;
  auto r = client_->create(kSlices, s);
  ASSERT_TRUE(r.ok()) << r.error().msg;
}

}  // namespace rdmanet::dp
