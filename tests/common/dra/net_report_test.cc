// The network report the CNI hands the DRA daemon (common/dra/net_report.h): what the CNI
// writes is what the daemon reads, and the daemon refuses anything else.
#include "common/dra/net_report.h"

#include <gtest/gtest.h>

#include <string>

namespace rdmanet::dra {
namespace {

NetReport ready() {
  return {.container_id = "c1",
          .interface_name = "eth1",
          .ips = {"10.0.0.5/24", "fd00::5/64"},
          .hardware_address = "02:00:00:aa:00:01"};
}

TEST(NetReport, WhatTheCniRendersTheDaemonReadsBack) {
  auto r = parseNetReport(renderNetReport(ready()));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, ready());
  const NetReport failed{.container_id = "c1",
                         .interface_name = "eth1",
                         .error_code = 100,
                         .error_message = "VF 0000:81:10.0 not found"};
  r = parseNetReport(renderNetReport(failed));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, failed);
  EXPECT_FALSE(r->ready());
}

TEST(NetReport, AnErrorMessageIsCutAndMadePrintableBeforeItIsWritten) {
  NetReport failed{.container_id = "c1", .interface_name = "eth1", .error_code = 7};
  failed.error_message = std::string(2000, 'x') + "\n\x01";
  failed.error_message[3] = '\n';
  auto r = parseNetReport(renderNetReport(failed));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->error_message.size(), kMaxErrorMessage);
  EXPECT_EQ(r->error_message[3], '?');
}

TEST(NetReport, TheDaemonRefusesAnythingButTheExactShape) {
  struct Case {
    const char* why;
    std::string text;
    const char* names;
  };
  const std::string many_ips = [] {
    std::string s;
    for (int i = 0; i < 17; ++i)
      s += (i ? "," : "") + std::string("\"10.0.0.") + std::to_string(i) + "/24\"";
    return s;
  }();
  const Case cases[] = {
      {"not JSON", "{", "not JSON"},
      {"not an object", "[]", "document"},
      {"an unknown key", R"({"containerID":"c","interfaceName":"eth1","ips":[],"x":1})", "\"x\""},
      {"no container", R"({"interfaceName":"eth1","ips":[]})", "containerID"},
      {"a bad container", R"({"containerID":"a/b","interfaceName":"eth1","ips":[]})",
       "containerID"},
      {"a bad ifname", R"({"containerID":"c","interfaceName":"../x","ips":[]})", "interfaceName"},
      {"a long ifname", R"({"containerID":"c","interfaceName":"abcdefghijklmnop","ips":[]})",
       "interfaceName"},
      {"no ips", R"({"containerID":"c","interfaceName":"eth1"})", "ips"},
      {"not an address", R"({"containerID":"c","interfaceName":"eth1","ips":["x"]})", "ips"},
      {"no prefix", R"({"containerID":"c","interfaceName":"eth1","ips":["10.0.0.1"]})", "ips"},
      {"not canonical", R"({"containerID":"c","interfaceName":"eth1","ips":["FD00::1/64"]})",
       "canonical"},
      {"a repeated address",
       R"({"containerID":"c","interfaceName":"eth1","ips":["10.0.0.1/8","10.0.0.1/8"]})",
       "repeats"},
      {"too many addresses",
       R"({"containerID":"c","interfaceName":"eth1","ips":[)" + many_ips + "]}", "over 16"},
      {"a bad MAC", R"({"containerID":"c","interfaceName":"eth1","ips":[],"hardwareAddress":"zz"})",
       "hardwareAddress"},
      {"an upper-case MAC",
       R"({"containerID":"c","interfaceName":"eth1","ips":[],"hardwareAddress":"02:00:00:AA:00:01"})",
       "hardwareAddress"},
      {"an error with data",
       R"({"containerID":"c","interfaceName":"eth1","ips":[],"error":{"code":7,"msg":"m"}})",
       "error"},
      {"an error code out of range",
       R"({"containerID":"c","interfaceName":"eth1","error":{"code":0,"msg":"m"}})", "error.code"},
      {"a control character",
       R"({"containerID":"c","interfaceName":"eth1","error":{"code":7,"msg":"a\nb"}})",
       "error.msg"},
      {"over the size cap", std::string(kMaxReportBytes + 1, ' '), "bytes"},
  };
  for (const Case& c : cases) {
    auto r = parseNetReport(c.text);
    ASSERT_FALSE(r.ok()) << c.why;
    EXPECT_NE(r.error().msg.find(c.names), std::string::npos) << c.why << ": " << r.error().msg;
  }
}

TEST(NetReport, ItsNameCarriesTheClaimAndTheDevice) {
  EXPECT_EQ(netReportName("0b5c-11", "vf-0"), "0b5c-11.vf-0.net");
  auto key = parseNetReportName("0b5c-11.vf-0.net");
  ASSERT_TRUE(key);
  EXPECT_EQ(key->claim_uid, "0b5c-11");
  EXPECT_EQ(key->device, "vf-0");
  for (const char* bad : {"0b5c-11.json", "x.net", "0b5c-11.Vf.net", "a.b.c.net", ".vf.net",
                          "0b5c-11.vf-0.net.rdmanet-tmp.12"}) {
    EXPECT_FALSE(parseNetReportName(bad)) << bad;
  }
}

}  // namespace
}  // namespace rdmanet::dra
