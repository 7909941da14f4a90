#pragma once
// The network configuration (stdin JSON) of rdmanet, parsed and range-checked.
//
// Compatible by design with netconfs written for sriov-cni and for the reference macvlan and
// host-device plugins: only `type` needs to change. Parsing checks types and ranges (error 7,
// naming the key), versions (1) and values we do not implement (2). Anything needing the node
// (is the deviceID a VF? does the master exist?) is decided later, in the plugin.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cni/conf/env.h"
#include "common/base/mac_address.h"
#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/net/ip.h"
#include "common/net/netlink.h"

namespace rdmanet::cni {

enum class Mode { kSriov, kMacvlan, kHostDevice };
std::string_view modeName(Mode m);
enum class LosslessCheck { kEnforce, kWarn, kOff };

struct LosslessConf {
  int priority = 0;  // 0..7: the priority on which the fabric runs PFC
  LosslessCheck check = LosslessCheck::kWarn;
};

struct Attachment {
  std::string container_id;
  std::string ifname;
  bool operator==(const Attachment&) const = default;
};

// clang-tidy 14's bugprone-exception-escape blames an implicit special member here, yet every
// member moves without throwing (strings, vectors, optionals of trivial structs, nlohmann::json)
// and a struct of those member types alone is not flagged: a false positive.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct NetConf {
  std::string cni_version;
  std::string name;
  std::string type;

  std::optional<Mode> mode;  // nullopt: infer from deviceID/device/master
  MacvlanMode macvlan_mode = MacvlanMode::kBridge;

  std::optional<PciAddress> device_id;  // runtimeConfig.deviceID > deviceID > pciBusID
  // runtimeConfig.deviceID when it names another device than deviceID/pciBusID: a device the pod
  // chose (Multus copies its annotation's there), used only when the pod owns it (device_owner.h).
  std::optional<PciAddress> pod_device_id;
  std::string device;                // host-device: a netdev name
  std::optional<MacAddress> hwaddr;  // host-device: select the netdev by MAC
  std::string master;                // macvlan

  std::optional<uint32_t> mtu;
  std::optional<MacAddress> mac;  // runtimeConfig.mac > CNI_ARGS MAC > args.cni.mac > mac
  // A MAC or IPs the pod chose (runtimeConfig.mac/ips, CNI_ARGS MAC/IP, args.cni.mac/ips) are
  // accepted only when the network opts in; ADD and CHECK refuse them otherwise (error 7).
  bool allow_pod_mac = false;  // allowPodMac
  bool allow_pod_ips = false;  // allowPodIPs

  std::optional<uint16_t> vlan;     // 0..4094; 0 means "no VLAN" as in sriov-cni
  std::optional<uint8_t> vlan_qos;  // 0..7
  uint16_t vlan_proto = 0x8100;     // "802.1q" or "802.1ad"
  std::optional<bool> spoofchk;
  std::optional<bool> trust;
  std::optional<VfLinkState> link_state;
  std::optional<uint32_t> min_tx_rate;
  std::optional<uint32_t> max_tx_rate;

  nlohmann::json ipam;    // the "ipam" object, or null when absent/empty
  std::string ipam_type;  // ipam.type, validated as a plain file name

  std::string log_level;
  std::string log_file;
  bool rdma = true;
  std::optional<LosslessConf> lossless;

  std::vector<IpPrefix> runtime_ips;  // runtimeConfig.ips
  // Paths a network names, each confined beneath the node's root for it (node_config.h); ADD and
  // CHECK refuse one outside, the other verbs ignore it.
  std::string device_info_file;  // runtimeConfig.CNIDeviceInfoFile
  std::string pod_info_dir;      // podInfoDir (pod_info.h)
  // draDevicesDir and resourceName: where the device plugin's DRA front records each pod's
  // claimed devices, and this network's pool (claimed_device.h). With both, a missing deviceID
  // is looked up there.
  std::string dra_devices_dir;
  std::string resource_name;
  nlohmann::json prev_result;                 // null when absent
  std::vector<Attachment> valid_attachments;  // GC: cni.dev/valid-attachments
  bool has_valid_attachments = false;

  nlohmann::json raw;  // the whole input, forwarded to IPAM

  // The PCP the pod's frames carry: the lossless priority, else vlanQoS, else 0.
  uint8_t pcp() const;
  bool hasVlan() const { return vlan.value_or(0) != 0; }
};

// Parses stdin for `command`. Error 6 (not JSON), 1 (cniVersion), 7 (types/ranges), 2
// (values we do not implement).
Result<NetConf> parseNetConf(std::string_view text, Command command, const CniArgs& args);
// Same, from an already parsed document (the fuzzer and the tests use both).
Result<NetConf> parseNetConfJson(const nlohmann::json& doc, Command command, const CniArgs& args);

// A plugin or IPAM type must be a plain file name: no '/', not "." or "..", printable.
bool isPlainFileName(std::string_view name);

}  // namespace rdmanet::cni
