// The input limits (cni/conf/limits.h) hold on the way in: a netconf at each limit is accepted by
// ADD, and then CHECK, DEL and GC all read back what ADD saved and release it completely. (Past
// each limit, the bad-input battery shows the refusal.)
#include "cni/conf/limits.h"

#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

json nestedArrays(int depth) {
  json j = json::array();
  for (int i = 1; i < depth; ++i) j = json::array({j});
  return j;
}

struct Extreme {
  const char* name;
  // Makes the extreme netconf from the fixture's macvlan netconf.
  std::function<void(json&)> grow;
};
void PrintTo(const Extreme& e, std::ostream* os) { *os << e.name; }

const Extreme kExtremes[] = {
    // The deepest document: the top-level object plus 63 arrays, 64 levels in all.
    {"DeepestNesting", [](json& c) { c["x"] = nestedArrays(kMaxJsonDepth - 1); }},
    {"DeepestNestingInIpam", [](json& c) { c["ipam"]["x"] = nestedArrays(kMaxJsonDepth - 2); }},
    // Longest strings, as many as fit: in "ipam", which the state file holds twice.
    {"LongestStringsInIpam",
     [](json& c) {
       for (int i = 0; i < 15; ++i) {
         c["ipam"]["s" + std::to_string(i)] = std::string(kMaxJsonStringBytes, 'a' + i);
       }
     }},
    {"LongestKey", [](json& c) { c[std::string(kMaxJsonStringBytes, 'k')] = 1; }},
    // Numbers that grow fourfold when written out, up to the limit.
    {"NumbersThatGrowToTheLimit",
     [](json& c) { c["ipam"]["n"] = std::vector<double>(kMaxConfigBytes / 19, 1e14); }},
    // A prevResult as large as fits: the state keeps it, merged into the result.
    {"LargestPrevResult",
     [](json& c) {
       // {"address":"10.a.b.c/32"}, at most 29 bytes each with its comma.
       json ips = json::array();
       for (size_t i = 0; i < (kMaxConfigBytes - 4096) / 29; ++i) {
         ips.push_back(
             {{"address", fmt::format("10.{}.{}.{}/32", i >> 16, (i >> 8) & 255, i & 255)}});
       }
       c["prevResult"] = {{"cniVersion", "1.1.0"}, {"ips", ips}};
     }},
};

class LimitsTest : public PluginTest, public ::testing::WithParamInterface<Extreme> {
 protected:
  std::string conf() const {
    json c = json::parse(macvlanConf());
    c["cniVersion"] = "1.1.0";
    GetParam().grow(c);
    const std::string text = c.dump();
    EXPECT_LE(text.size(), kMaxConfigBytes);
    return text;
  }
};

TEST_P(LimitsTest, WhatAddAcceptsCheckDelAndGcReadBack) {
  const World before = world();
  const std::string c = conf();
  const json added = addOk(c);
  const Invocation check = invoke("CHECK", withPrev(c, added));
  EXPECT_EQ(check.exit_code, 0) << check.stdout_data.substr(0, 300);
  const Invocation del = invoke("DEL", c);
  EXPECT_EQ(del.exit_code, 0) << del.stdout_data.substr(0, 300);
  EXPECT_EQ(world(), before) << dumpWorld(world());

  addOk(c);
  json gc = json::parse(c);
  gc["cni.dev/valid-attachments"] = json::array();
  const Invocation out = invoke("GC", gc.dump(), "", "", "");
  EXPECT_EQ(out.exit_code, 0) << out.stdout_data.substr(0, 300);
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

INSTANTIATE_TEST_SUITE_P(AtTheLimits, LimitsTest, ::testing::ValuesIn(kExtremes),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace rdmanet::cni::testing
