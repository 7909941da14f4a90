// The ACS capability walk over raw config-space bytes.
#include <gtest/gtest.h>

#include <vector>

#include "deviceplugin/doctor/acs.h"
#include "tests/simnode/sim_tree.h"

namespace rdmanet::doctor {
namespace {

void put32(std::vector<uint8_t>& c, size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) c[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t ext(uint16_t id, uint16_t next) { return id | (1u << 16) | (uint32_t{next} << 20); }

TEST(AcsParse, FindsAcsAfterOtherCapabilities) {
  std::vector<uint8_t> c(4096, 0);
  put32(c, 0x100, ext(0x0001, 0x150));  // AER
  put32(c, 0x150, ext(0x000B, 0x200));  // vendor specific
  put32(c, 0x200, ext(0x000D, 0));      // ACS
  c[0x204] = 0x5f;                      // capability
  c[0x206] = 0x04;                      // control: request redirect only
  auto acs = parseAcs(c);
  ASSERT_TRUE(acs.ok()) << acs.error().msg;
  ASSERT_TRUE(acs->has_value());
  EXPECT_EQ((*acs)->offset, 0x200);
  EXPECT_EQ((*acs)->capability, 0x5f);
  EXPECT_TRUE((*acs)->p2pRequestRedirect());
  EXPECT_FALSE((*acs)->p2pCompletionRedirect());
  EXPECT_TRUE((*acs)->redirects());
  EXPECT_EQ((*acs)->describe(), "SrcValid- ReqRedir+ CmpltRedir- UpstreamFwd-");
}

TEST(AcsParse, CompletionRedirectAloneCounts) {
  std::vector<uint8_t> c(4096, 0);
  put32(c, 0x100, ext(0x000D, 0));
  c[0x106] = 0x08;
  auto acs = parseAcs(c);
  ASSERT_TRUE(acs.ok());
  EXPECT_TRUE((*acs)->redirects());
}

TEST(AcsParse, NoAcsInTheListIsNullopt) {
  std::vector<uint8_t> c(4096, 0);
  put32(c, 0x100, ext(0x0001, 0));
  auto acs = parseAcs(c);
  ASSERT_TRUE(acs.ok());
  EXPECT_FALSE(acs->has_value());
  std::vector<uint8_t> empty(4096, 0);  // no extended capabilities at all
  EXPECT_FALSE(parseAcs(empty)->has_value());
  std::vector<uint8_t> gone(4096, 0xff);  // a function that went away reads all-ones
  EXPECT_FALSE(parseAcs(gone)->has_value());
}

TEST(AcsParse, LoopsAndWildPointersAreErrors) {
  std::vector<uint8_t> loop(4096, 0);
  put32(loop, 0x100, ext(0x0001, 0x100));
  EXPECT_EQ(parseAcs(loop).error().code, ErrorCode::kInvalidConfig);
  std::vector<uint8_t> wild(4096, 0);
  put32(wild, 0x100, ext(0x0001, 0x40));  // into the legacy area
  EXPECT_EQ(parseAcs(wild).error().code, ErrorCode::kInvalidConfig);
}

TEST(AcsParse, TruncatedConfigSpaceIsAnError) {
  std::vector<uint8_t> c(64, 0);
  auto acs = parseAcs(c);
  ASSERT_FALSE(acs.ok());
  EXPECT_NE(acs.error().msg.find("read it as root"), std::string::npos);
}

TEST(AcsParse, ReadsWhatTheSimulatedBridgeWrites) {
  for (bool redirect : {false, true}) {
    const auto cfg =
        sim::bridgeConfigSpace(sim::BridgeSpec{.address = sim::pci("0000:02:00.0"),
                                               .kind = sim::BridgeKind::kSwitchDownstream,
                                               .acs_redirect = redirect});
    auto acs = parseAcs(cfg);
    ASSERT_TRUE(acs.ok());
    ASSERT_TRUE(acs->has_value());
    EXPECT_EQ((*acs)->offset, sim::kAcsCapOffset);
    EXPECT_EQ((*acs)->redirects(), redirect);
  }
  // A switch upstream port has no ACS capability.
  const auto up = sim::bridgeConfigSpace(sim::BridgeSpec{.address = sim::pci("0000:01:00.0"),
                                                         .kind = sim::BridgeKind::kSwitchUpstream});
  EXPECT_FALSE(parseAcs(up)->has_value());
}

}  // namespace
}  // namespace rdmanet::doctor
