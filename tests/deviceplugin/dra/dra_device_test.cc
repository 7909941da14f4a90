#include "deviceplugin/dra/dra_device.h"

#include <gtest/gtest.h>

#include "tests/simnode/sim_tree.h"

namespace rdmanet::dra {
namespace {

DraDevice device(std::string name = "pci-0000-81-00-2") {
  DraDevice d;
  d.name = std::move(name);
  d.attributes = {{std::string(kAttrPcieRoot), std::string("pci0000:80")},
                  {std::string(kAttrNumaNode), int64_t{1}},
                  {"rdmanet.io/pool", std::string("vf")},
                  {"rdmanet.io/lossless", true},
                  {"rdmanet.io/firmware", Version{"16.35.2000"}}};
  return d;
}

TEST(PciDeviceNameTest, IsAStableDnsLabelOfTheAddress) {
  EXPECT_EQ(pciDeviceName(sim::pci("0000:81:00.1")), "pci-0000-81-00-1");
  EXPECT_EQ(pciDeviceName(sim::pci("00AB:fe:1f.7")), "pci-00ab-fe-1f-7");
  DraDevice d = device(pciDeviceName(sim::pci("ffff:ff:1f.7")));
  EXPECT_TRUE(validateDevice(d).ok());
}

TEST(PciDeviceNameTest, NamesBackTheirAddressAndNothingElseDoes) {
  EXPECT_EQ(pciOfDeviceName("pci-0000-81-00-1"), sim::pci("0000:81:00.1"));
  EXPECT_EQ(pciOfDeviceName("pci-00ab-fe-1f-7"), sim::pci("00ab:fe:1f.7"));
  for (const char* other : {"pci-0000-81-00-8", "pci-0000-81-00", "pci-0000-81-00-1x", "gpu-0",
                            "pci-00AB-fe-1f-7", "pci-0000:81:00.1"}) {
    EXPECT_FALSE(pciOfDeviceName(other).has_value()) << other;
  }
}

TEST(ValidateDeviceTest, AcceptsEveryValueKind) {
  auto st = validateDevice(device());
  EXPECT_TRUE(st.ok()) << st.error().msg;
}

TEST(ValidateDeviceTest, AcceptsTheLimitsExactly) {
  DraDevice d = device();
  d.attributes.clear();
  for (int i = 0; i < 32; ++i) d.attributes["rdmanet.io/a" + std::to_string(i)] = int64_t{i};
  d.attributes["rdmanet.io/a0"] = std::string(64, 'x');
  d.attributes[std::string(63 - 4, 'd') + ".com/" + std::string(32, 'i')] = true;
  d.attributes.erase("rdmanet.io/a1");
  d.taints.assign(16, DeviceTaint{.key = "rdmanet.io/unhealthy"});
  auto st = validateDevice(d);
  EXPECT_TRUE(st.ok()) << st.error().msg;
  // Two consumptions of 32 counters each.
  d.consumes_counters.resize(2);
  for (int c = 0; c < 2; ++c) {
    d.consumes_counters[c].counter_set = "set-" + std::to_string(c);
    for (int i = 0; i < 32; ++i) d.consumes_counters[c].counters["c" + std::to_string(i)] = "1";
  }
  st = validateDevice(d);
  EXPECT_TRUE(st.ok()) << st.error().msg;
}

TEST(ValidateCounterSetTest, NamesAndCountersAreDnsLabelsAndThereAreOneTo32) {
  CounterSet set{.name = "pci-0000-81-00-0", .counters = {{"bandwidth", "100G"}}};
  EXPECT_TRUE(validateCounterSet(set).ok());
  for (int i = 0; i < 31; ++i) set.counters["c" + std::to_string(i)] = "1";
  EXPECT_TRUE(validateCounterSet(set).ok());
  set.counters["one-too-many"] = "1";
  auto st = validateCounterSet(set);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().msg.find("33 counters; 1 to 32"), std::string::npos) << st.error().msg;
  st = validateCounterSet({.name = "Bad", .counters = {{"bandwidth", "1"}}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(st.error().msg.find("DRA counter set \"Bad\": the name is not a DNS label"),
            std::string::npos)
      << st.error().msg;
  EXPECT_FALSE(validateCounterSet({.name = "pf"}).ok());
}

TEST(ValidateDeviceTest, RejectsWhatTheApiServerWould) {
  struct Case {
    std::string what;
    std::function<void(DraDevice&)> edit;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"upper-case name", [](DraDevice& d) { d.name = "PCI-0"; }, "DNS label"},
      {"name with a dot", [](DraDevice& d) { d.name = "a.b"; }, "DNS label"},
      {"33 attributes",
       [](DraDevice& d) {
         for (int i = 0; i < 28; ++i) d.attributes["x" + std::to_string(i)] = true;
       },
       "33 attributes and capacities, at most 32"},
      {"32 attributes and a capacity",
       [](DraDevice& d) {
         for (int i = 0; i < 27; ++i) d.attributes["x" + std::to_string(i)] = true;
         d.capacity["rdmanet.io/bandwidth"] = "25G";
       },
       "33 attributes and capacities, at most 32"},
      {"capacity with a dash", [](DraDevice& d) { d.capacity["rdmanet.io/tx-rate"] = "1"; },
       "C identifier"},
      {"capacity without a quantity", [](DraDevice& d) { d.capacity["rdmanet.io/bw"] = ""; },
       "capacity \"rdmanet.io/bw\" has no quantity"},
      {"a request policy on a device only one claim takes",
       [](DraDevice& d) { d.capacity["rdmanet.io/bandwidth"] = DeviceCapacity("100G", "40G"); },
       "capacity \"rdmanet.io/bandwidth\": a request policy needs allowMultipleAllocations"},
      {"3 counter consumptions",
       [](DraDevice& d) {
         for (const char* s : {"a", "b", "c"}) {
           d.consumes_counters.push_back({.counter_set = s, .counters = {{"bandwidth", "1G"}}});
         }
       },
       "3 counter consumptions, at most 2"},
      {"a counter set consumed twice",
       [](DraDevice& d) {
         d.consumes_counters.assign(2, {.counter_set = "pf", .counters = {{"bandwidth", "1G"}}});
       },
       "counter set \"pf\" is consumed twice"},
      {"a counter set name that is no DNS label",
       [](DraDevice& d) {
         d.consumes_counters = {{.counter_set = "PF_0", .counters = {{"bandwidth", "1G"}}}};
       },
       "counter set \"PF_0\": the name is not a DNS label"},
      {"a consumption of no counter",
       [](DraDevice& d) { d.consumes_counters = {{.counter_set = "pf"}}; },
       "counter set \"pf\" has 0 counters; 1 to 32 are allowed"},
      {"a counter name that is no DNS label",
       [](DraDevice& d) {
         d.consumes_counters = {{.counter_set = "pf", .counters = {{"Band_width", "1G"}}}};
       },
       "counter \"Band_width\" is not a DNS label"},
      {"65-character string",
       [](DraDevice& d) { d.attributes["rdmanet.io/pool"] = std::string(65, 'p'); },
       "65 characters, at most 64"},
      {"65-character version",
       [](DraDevice& d) { d.attributes["v"] = Version{"1.0.0-" + std::string(59, 'a')}; },
       "65 characters"},
      {"not a semver", [](DraDevice& d) { d.attributes["v"] = Version{"16.35"}; },
       "not a semantic version"},
      {"identifier too long",
       [](DraDevice& d) { d.attributes["rdmanet.io/" + std::string(33, 'a')] = true; },
       "C identifier of at most 32"},
      {"identifier with a dash", [](DraDevice& d) { d.attributes["rdmanet.io/pf-name"] = true; },
       "C identifier"},
      {"bad domain", [](DraDevice& d) { d.attributes["Rdmanet.IO/x"] = true; }, "DNS subdomain"},
      {"domain too long",
       [](DraDevice& d) { d.attributes[std::string(60, 'd') + ".com/x"] = true; }, "at most 63"},
      {"17 taints",
       [](DraDevice& d) { d.taints.assign(17, DeviceTaint{.key = "rdmanet.io/unhealthy"}); },
       "17 taints, at most 16"},
      {"bad taint key", [](DraDevice& d) { d.taints = {{.key = "rdmanet.io/-bad"}}; },
       "not a label name"},
      {"bad taint value", [](DraDevice& d) { d.taints = {{.key = "k", .value = "a b"}}; },
       "not a label value"},
      {"PreferNoSchedule",
       [](DraDevice& d) { d.taints = {{.key = "k", .effect = "PreferNoSchedule"}}; },
       "not None, NoSchedule or NoExecute"},
  };
  for (const auto& k : cases) {
    DraDevice d = device();
    k.edit(d);
    auto st = validateDevice(d);
    ASSERT_FALSE(st.ok()) << k.what;
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidConfig) << k.what;
    EXPECT_NE(st.error().msg.find(k.says), std::string::npos) << k.what << ": " << st.error().msg;
  }
}

}  // namespace
}  // namespace rdmanet::dra
