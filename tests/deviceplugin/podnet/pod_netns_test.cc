// The pod series through the real kernel (netns label; root, skipped otherwise): a host-device
// pod whose netdev (a veth standing for the moved function) lives in a throw-away namespace. Its
// port is read inside that namespace, through a sysfs mounted there and an ethtool socket
// opened there: the link-down series counts its carrier losses, which the host cannot see.
#include <gtest/gtest.h>

#include "cni/state/state_store.h"
#include "common/net/ethtool_stats.h"
#include "common/net/netns_sysfs.h"
#include "deviceplugin/podnet/pod_metrics.h"
#include "tests/common/net/netns_helpers.h"
#include "tests/deviceplugin/podnet/cni_state.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::podnet {
namespace {

using rdmanet::testing::ip;

TEST(PodNetnsTest, AHostDevicePodsLinkDownsAreCountedInsideItsNamespace) {
  if (!rdmanet::testing::isRoot()) GTEST_SKIP() << "netns test needs root";
  rdmanet::testing::ScratchNetns ns;
  ASSERT_TRUE(ns.ok());
  std::string err;
  const std::string n = ns.name();
  ASSERT_TRUE(ip({"-n", n, "link", "add", "net1", "type", "veth", "peer", "name", "peer1"}, &err))
      << err;
  ASSERT_TRUE(ip({"-n", n, "link", "set", "peer1", "up"}, &err)) << err;
  ASSERT_TRUE(ip({"-n", n, "link", "set", "net1", "up"}, &err)) << err;
  // The peer going down takes net1's carrier: one carrier loss, counted by the kernel.
  ASSERT_TRUE(ip({"-n", n, "link", "set", "peer1", "down"}, &err)) << err;

  sim::TempDir state{"rdmanet-podnetns"};
  cni::StateStore store(state.path());
  auto st = testing::cniAttachment("h0", "ml", "solo", cni::Mode::kHostDevice);
  st.netns = ns.path();
  st.host_ifname = "ens9f0";  // its name in the host before ADD moved it
  ASSERT_TRUE(store.save(st).ok());

  const Sysfs host("/");
  MountingNetnsSysfs netns;
  PodMetrics metrics(
      {.state_dir = state.path()},
      {.host = &host, .netns = &netns, .open_ethtool = []() -> std::unique_ptr<EthtoolStatsReader> {
         auto r = IoctlEthtoolStats::open();
         return r.ok() ? std::move(r).value() : nullptr;
       }});
  const std::string text = metrics.render();
  // What the kernel counts (up/down transitions of a fresh veth add to it), read independently
  // with `ip netns exec`, which mounts the namespace's own sysfs.
  std::string count;
  rdmanet::testing::run(
      {"/bin/sh", "-c",
       "/usr/bin/ip netns exec " + n + " cat /sys/class/net/net1/carrier_down_count 1>&2"},
      &count);
  while (!count.empty() && count.back() == '\n') count.pop_back();
  ASSERT_FALSE(count.empty());
  EXPECT_GE(std::stoi(count), 1);
  EXPECT_NE(text.find("\nrdmanet_port_link_down_events_total{netdev=\"ens9f0\",device=\"\"} " +
                      count + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nrdmanet_pod_netns_read_errors 0\n"), std::string::npos) << text;
  // veth has statistics but no PFC counters: no pause series for the port.
  EXPECT_EQ(text.find("rdmanet_port_pfc_pause_frames_total{"), std::string::npos) << text;
}

}  // namespace
}  // namespace rdmanet::podnet
