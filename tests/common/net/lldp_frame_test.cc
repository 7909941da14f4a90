// parseLldpdu with the bytes of a frame Debian's lldpd 1.0.16 sent (captured with tcpdump from
// `lldpd -I ltb` with hostname leaf-7 and portidsubtype ifname), and with hand-built TLVs for
// each subtype and each fault 802.1AB names.
#include "common/net/lldp_frame.h"

#include <gtest/gtest.h>

#include <vector>

namespace rdmanet {
namespace {

using Bytes = std::vector<uint8_t>;

// The LLDPDU after the Ethernet header, as lldpd sent it (99 bytes, ending in an End TLV).
const Bytes kLldpdFrame = {
    0x02, 0x07, 0x04, 0x5e, 0x30, 0x8e, 0x40, 0xc1, 0x36, 0x04, 0x04, 0x05, 0x6c, 0x74, 0x62,
    0x06, 0x02, 0x00, 0x04, 0x0a, 0x06, 0x6c, 0x65, 0x61, 0x66, 0x2d, 0x37, 0x0c, 0x09, 0x74,
    0x65, 0x73, 0x74, 0x20, 0x6c, 0x65, 0x61, 0x66, 0x0e, 0x04, 0x00, 0x9c, 0x00, 0x10, 0x10,
    0x18, 0x11, 0x02, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5c, 0x30, 0x8e, 0xff,
    0xfe, 0x40, 0xc1, 0x36, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x08, 0x03, 0x6c, 0x74, 0x62,
    0xfe, 0x09, 0x00, 0x12, 0x0f, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0xfe, 0x09, 0x00, 0x12,
    0x0f, 0x01, 0x00, 0x80, 0x00, 0x00, 0x36, 0x00, 0x00};

// One TLV: 7 bits of type, 9 bits of length, the value.
Bytes tlv(int type, const Bytes& value) {
  Bytes b = {static_cast<uint8_t>((type << 1) | (value.size() >> 8)),
             static_cast<uint8_t>(value.size() & 0xff)};
  b.insert(b.end(), value.begin(), value.end());
  return b;
}
Bytes text(uint8_t subtype, std::string_view s) {
  Bytes b(s.size() + 1);
  b[0] = subtype;
  std::copy(s.begin(), s.end(), b.begin() + 1);
  return b;
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
const Bytes kChassis = tlv(1, text(7, "leaf-3"));
const Bytes kPort = tlv(2, text(5, "Ethernet12"));
const Bytes kTtl120 = tlv(3, {0x00, 0x78});

TEST(LldpFrameTest, ReadsWhatLldpdSent) {
  auto n = parseLldpdu(kLldpdFrame);
  ASSERT_TRUE(n.ok()) << n.error().msg;
  EXPECT_EQ(n->chassis_id, "5e:30:8e:40:c1:36");
  EXPECT_EQ(n->chassis_id_subtype, 4);
  EXPECT_EQ(n->port_id, "ltb");
  EXPECT_EQ(n->port_id_subtype, 5);
  EXPECT_EQ(n->ttl_seconds, 4);
  EXPECT_EQ(n->system_name, "leaf-7");
  EXPECT_EQ(n->port_description, "ltb");
}

TEST(LldpFrameTest, EthernetPaddingAfterTheEndTlvIsIgnored) {
  Bytes padded = cat({kChassis, kPort, kTtl120, tlv(0, {})});
  padded.resize(46, 0xaa);  // the minimum payload, padded with anything
  auto n = parseLldpdu(padded);
  ASSERT_TRUE(n.ok()) << n.error().msg;
  EXPECT_EQ(n->chassis_id, "leaf-3");
  EXPECT_EQ(n->port_id, "Ethernet12");
  EXPECT_EQ(n->ttl_seconds, 120);
}

TEST(LldpFrameTest, TheEndTlvIsOptional) {
  auto n = parseLldpdu(cat({kChassis, kPort, kTtl120, tlv(5, text('l', "eaf-9"))}));
  ASSERT_TRUE(n.ok()) << n.error().msg;
  EXPECT_EQ(n->system_name, "leaf-9");
}

TEST(LldpFrameTest, IdsAreTextByTheirSubtype) {
  struct Case {
    Bytes chassis_value;
    std::string want;
  } cases[] = {
      {{4, 0x0c, 0x42, 0xa1, 0x00, 0x00, 0x01}, "0c:42:a1:00:00:01"},  // MAC
      {{5, 1, 10, 0, 0, 7}, "10.0.0.7"},                               // IPv4
      {{5, 2, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "fd00::1"},
      {{5, 9, 1, 2}, "0x090102"},          // an address family it does not know
      {{4, 1, 2, 3}, "0x010203"},          // a "MAC" of 3 bytes: hex
      {{7, 's', 'w', '1'}, "sw1"},         // locally assigned, printable
      {{7, 's', 0x00, 0xff}, "0x7300ff"},  // not printable: hex
  };
  for (const Case& c : cases) {
    auto n = parseLldpdu(cat({tlv(1, c.chassis_value), kPort, kTtl120}));
    ASSERT_TRUE(n.ok()) << n.error().msg;
    EXPECT_EQ(n->chassis_id, c.want);
  }
  auto mac_port = parseLldpdu(cat({kChassis, tlv(2, {3, 1, 2, 3, 4, 5, 6}), kTtl120}));
  ASSERT_TRUE(mac_port.ok());
  EXPECT_EQ(mac_port->port_id, "01:02:03:04:05:06");
}

TEST(LldpFrameTest, NamesKeepOnlyPrintableBytes) {
  auto n = parseLldpdu(cat({kChassis, kPort, kTtl120, tlv(5, {'a', '\n', 'b', 0xc3})}));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->system_name, "a?b?");
}

TEST(LldpFrameTest, ARepeatedOptionalTlvKeepsTheFirst) {
  auto n =
      parseLldpdu(cat({kChassis, kPort, kTtl120, tlv(5, text('a', "1")), tlv(5, text('b', "2"))}));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->system_name, "a1");
}

TEST(LldpFrameTest, TtlZeroIsAShutdown) {
  auto n = parseLldpdu(cat({kChassis, kPort, tlv(3, {0, 0})}));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->ttl_seconds, 0);
}

TEST(LldpFrameTest, FaultsAreRefusedNamingThem) {
  struct Case {
    Bytes pdu;
    std::string want;
  } cases[] = {
      {{}, "missing mandatory"},
      {cat({kChassis, kPort}), "missing mandatory"},
      {cat({kPort, kChassis, kTtl120}), "TLV 2 where the mandatory TLV 1 belongs"},
      {cat({kChassis, kTtl120, kPort}), "TLV 3 where the mandatory TLV 2 belongs"},
      {cat({tlv(0, {}), kChassis}), "TLV 0 where the mandatory TLV 1 belongs"},
      {cat({kChassis, kPort, kTtl120, kPort}), "mandatory TLV 2 repeated"},
      {cat({tlv(1, {7}), kPort, kTtl120}), "ID TLV 1 of 1 bytes"},
      {cat({tlv(1, Bytes(257, 'x')), kPort, kTtl120}), "ID TLV 1 of 257 bytes"},
      {cat({kChassis, kPort, tlv(3, {1})}), "TTL TLV of 1 bytes"},
      {{0x02}, "truncated TLV header"},
      {{0x02, 0x07, 0x04, 0x01}, "runs past the frame"},
  };
  for (const Case& c : cases) {
    auto n = parseLldpdu(c.pdu);
    ASSERT_FALSE(n.ok()) << c.want;
    EXPECT_EQ(n.error().code, ErrorCode::kDecodeFailure);
    EXPECT_NE(n.error().msg.find(c.want), std::string::npos) << n.error().msg;
  }
}

}  // namespace
}  // namespace rdmanet
