// The daemon's own series (deviceplugin/metrics.h) as /metrics serves them: here the ports' LLDP
// neighbours, which follow what the daemon hands over and escape what a switch may say.
#include "deviceplugin/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rdmanet::dp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kFamily =
    "# HELP rdmanet_port_lldp_neighbor_info The switch port each port is cabled to, from LLDP, "
    "with its rail; 1 while known.\n"
    "# TYPE rdmanet_port_lldp_neighbor_info gauge\n";

PortNeighborInfo leaf7(std::string port, std::string rail) {
  return {.switch_name = "leaf-7",
          .chassis_id = "0c:42:a1:00:00:07",
          .port_id = std::move(port),
          .rail = std::move(rail)};
}

TEST(MetricsTest, APortsNeighbourIsOneSeriesWithItsLabels) {
  Metrics m;
  m.setPortNeighbors({{"ens1f0", leaf7("Ethernet1/3", "rail-3")}, {"ens2f1", leaf7("p4", "")}});
  EXPECT_THAT(m.render(),
              HasSubstr(std::string(kFamily) +
                        "rdmanet_port_lldp_neighbor_info{port=\"ens1f0\",switch=\"leaf-7\","
                        "switch_chassis_id=\"0c:42:a1:00:00:07\",switch_port=\"Ethernet1/3\","
                        "rail=\"rail-3\"} 1\n"
                        "rdmanet_port_lldp_neighbor_info{port=\"ens2f1\",switch=\"leaf-7\","
                        "switch_chassis_id=\"0c:42:a1:00:00:07\",switch_port=\"p4\",rail=\"\"} "
                        "1\n"));
}

TEST(MetricsTest, AForgottenNeighbourLosesItsSeries) {
  Metrics m;
  m.setPortNeighbors({{"ens1f0", leaf7("p1", "rail-1")}, {"ens2f1", leaf7("p2", "rail-2")}});
  // ens1f0's neighbour ran out of TTL (or said TTL 0): the daemon hands over the rest.
  m.setPortNeighbors({{"ens2f1", leaf7("p2", "rail-2")}});
  const std::string text = m.render();
  EXPECT_THAT(text, Not(HasSubstr("port=\"ens1f0\"")));
  EXPECT_THAT(text, HasSubstr("port=\"ens2f1\""));
  m.setPortNeighbors({});
  // The family stays, without samples.
  EXPECT_THAT(m.render(), HasSubstr(kFamily));
  EXPECT_THAT(m.render(), Not(HasSubstr("rdmanet_port_lldp_neighbor_info{")));
}

TEST(MetricsTest, WhatASwitchSaysIsEscapedInLabelValues) {
  Metrics m;
  PortNeighborInfo n = leaf7("a\"b", "");
  n.switch_name = "leaf\"} 1\nrdmanet_fake 2\\";
  m.setPortNeighbors({{"ens1f0", n}});
  const std::string text = m.render();
  EXPECT_THAT(text, HasSubstr("switch=\"leaf\\\"} 1\\nrdmanet_fake 2\\\\\","));
  EXPECT_THAT(text, HasSubstr("switch_port=\"a\\\"b\""));
  EXPECT_THAT(text, Not(HasSubstr("\nrdmanet_fake")));  // no line of its own
}

}  // namespace
}  // namespace rdmanet::dp
