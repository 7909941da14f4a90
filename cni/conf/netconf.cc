#include "cni/conf/netconf.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

#include "cni/conf/json_util.h"
#include "cni/conf/version.h"
#include "common/base/enum_names.h"
#include "common/json/json_fields.h"

namespace rdmanet::cni {
namespace {

Error unsupported(std::string_view key, std::string_view value, std::string_view allowed) {
  return makeError(
      ErrorCode::kUnsupportedField,
      fmt::format("unsupported value \"{}\" for \"{}\" (supported: {})", value, key, allowed));
}

// The two ways a netconf refuses a word not in an enum's table (WordRefusal): a value rdmanet
// does not implement is error 2 (mode, macvlanMode, lossless.check); a malformed one is error 7.
Error unsupportedWord(std::string_view key, std::string_view word,
                      std::span<const std::string_view> words) {
  return unsupported(key, word, fmt::format("{}", fmt::join(words, ", ")));
}
// "\"<key>\" must be \"a\", \"b\" or \"c\", not \"<word>\"".
Error mustBeOneOf(std::string_view key, std::string_view word,
                  std::span<const std::string_view> words) {
  std::string allowed;
  for (size_t i = 0; i < words.size(); ++i) {
    const char* sep = i == 0 ? "" : i + 1 == words.size() ? " or " : ", ";
    allowed += fmt::format("{}\"{}\"", sep, words[i]);
  }
  return invalidConfig(fmt::format("\"{}\" must be {}, not \"{}\"", key, allowed, word));
}

constexpr EnumName<Mode> kModes[] = {
    {"sriov", Mode::kSriov}, {"macvlan", Mode::kMacvlan}, {"host-device", Mode::kHostDevice}};
constexpr EnumName<MacvlanMode> kMacvlanModes[] = {{"bridge", MacvlanMode::kBridge},
                                                   {"private", MacvlanMode::kPrivate},
                                                   {"vepa", MacvlanMode::kVepa},
                                                   {"passthru", MacvlanMode::kPassthru}};
constexpr EnumName<LosslessCheck> kLosslessChecks[] = {{"enforce", LosslessCheck::kEnforce},
                                                       {"warn", LosslessCheck::kWarn},
                                                       {"off", LosslessCheck::kOff}};
constexpr EnumName<VfLinkState> kLinkStates[] = {{"auto", VfLinkState::kAuto},
                                                 {"enable", VfLinkState::kEnable},
                                                 {"disable", VfLinkState::kDisable}};
// The VLAN's ethertype, as the kernel takes it.
constexpr EnumName<uint16_t> kVlanProtos[] = {{"802.1q", 0x8100}, {"802.1ad", 0x88a8}};
constexpr EnumName<bool> kOnOff[] = {
    {"on", true}, {"off", false}, {"true", true}, {"false", false}};

// sriov-cni writes "on"/"off" (in any case); accept booleans too.
Result<std::optional<bool>> onOff(const json& obj, std::string_view key) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return std::optional<bool>();
  if (v->is_boolean()) return std::optional<bool>(v->get<bool>());
  if (!v->is_string()) return jsonTypeError(key, "\"on\" or \"off\"");
  RDMANET_ASSIGN_OR_RETURN(bool on, asEnum<bool>(*v, key, kOnOff, mustBeOneOf, WordCase::kFold));
  return std::optional<bool>(on);
}

Result<std::optional<PciAddress>> pciField(const json& obj, std::string_view key) {
  RDMANET_ASSIGN_OR_RETURN(auto s, optString(obj, key));
  if (!s || s->empty()) return std::optional<PciAddress>();
  auto pci = PciAddress::parse(*s);
  if (!pci.ok()) {
    return invalidConfig(fmt::format("\"{}\" is not a PCI address (want DDDD:BB:DD.F)", key));
  }
  return std::optional<PciAddress>(*pci);
}

Result<std::optional<MacAddress>> macField(const json& obj, std::string_view key) {
  RDMANET_ASSIGN_OR_RETURN(auto s, optString(obj, key));
  if (!s || s->empty()) return std::optional<MacAddress>();
  auto mac = MacAddress::parse(*s);
  if (!mac.ok()) return invalidConfig(fmt::format("\"{}\" is not a MAC address", key));
  if (mac->isMulticast())
    return invalidConfig(fmt::format("\"{}\" is a multicast MAC address", key));
  return std::optional<MacAddress>(*mac);
}

bool isSafeAbsPath(std::string_view p) { return isPlausibleNetnsPath(p); }

Status parseModeKeys(const json& doc, NetConf& c) {
  RDMANET_ASSIGN_OR_RETURN(auto mode, optString(doc, "mode"));
  RDMANET_ASSIGN_OR_RETURN(
      auto mv_mode, optEnum<MacvlanMode>(doc, "macvlanMode", kMacvlanModes, unsupportedWord));
  if (mv_mode) c.macvlan_mode = *mv_mode;
  if (!mode || mode->empty()) return okStatus();
  if (auto m = enumOf<Mode>(kModes, *mode)) {
    c.mode = m;
  } else if (auto m = enumOf<MacvlanMode>(kMacvlanModes, *mode)) {
    // A reference-macvlan netconf: "mode" is the macvlan sub-mode.
    if (mv_mode && *m != c.macvlan_mode) {
      return invalidConfig(fmt::format("\"mode\" \"{}\" contradicts \"macvlanMode\" \"{}\"", *mode,
                                       nameOf<MacvlanMode>(kMacvlanModes, *mv_mode)));
    }
    c.mode = Mode::kMacvlan;
    c.macvlan_mode = *m;
  } else {
    // Either table's words: a macvlan sub-mode is a mode of its own here.
    std::vector<std::string_view> words = enumWords<Mode>(kModes);
    for (std::string_view w : enumWords<MacvlanMode>(kMacvlanModes)) words.push_back(w);
    return unsupportedWord("mode", *mode, words);
  }
  return okStatus();
}

Status parseVfKeys(const json& doc, NetConf& c) {
  RDMANET_ASSIGN_OR_RETURN(auto vlan, optInt(doc, "vlan", 0, 4094));
  RDMANET_ASSIGN_OR_RETURN(auto qos, optInt(doc, "vlanQoS", 0, 7));
  if (vlan) c.vlan = static_cast<uint16_t>(*vlan);
  if (qos) c.vlan_qos = static_cast<uint8_t>(*qos);
  RDMANET_ASSIGN_OR_RETURN(
      auto proto, optEnum<uint16_t>(doc, "vlanProto", kVlanProtos, mustBeOneOf, WordCase::kFold));
  if (proto) c.vlan_proto = *proto;
  if (c.vlan_qos.value_or(0) != 0 && !c.hasVlan()) {
    return invalidConfig("\"vlanQoS\" needs a non-zero \"vlan\"");
  }
  if (c.vlan_proto != 0x8100 && !c.hasVlan()) {
    return invalidConfig("\"vlanProto\" 802.1ad needs a non-zero \"vlan\"");
  }
  RDMANET_ASSIGN_OR_RETURN(c.spoofchk, onOff(doc, "spoofchk"));
  RDMANET_ASSIGN_OR_RETURN(c.trust, onOff(doc, "trust"));
  RDMANET_ASSIGN_OR_RETURN(c.link_state,
                           optEnum<VfLinkState>(doc, "link_state", kLinkStates, mustBeOneOf));
  RDMANET_ASSIGN_OR_RETURN(auto min_rate, optInt(doc, "min_tx_rate", 0, UINT32_MAX));
  RDMANET_ASSIGN_OR_RETURN(auto max_rate, optInt(doc, "max_tx_rate", 0, UINT32_MAX));
  if (min_rate) c.min_tx_rate = static_cast<uint32_t>(*min_rate);
  if (max_rate) c.max_tx_rate = static_cast<uint32_t>(*max_rate);
  if (c.max_tx_rate.value_or(0) != 0 && c.min_tx_rate.value_or(0) > *c.max_tx_rate) {
    return invalidConfig(fmt::format("\"min_tx_rate\" {} is above \"max_tx_rate\" {}",
                                     *c.min_tx_rate, *c.max_tx_rate));
  }
  return okStatus();
}

Status parseLossless(const json& doc, NetConf& c) {
  RDMANET_ASSIGN_OR_RETURN(const json* l, optObject(doc, "lossless"));
  if (l == nullptr) return okStatus();
  LosslessConf lc;
  RDMANET_ASSIGN_OR_RETURN(auto prio, optInt(*l, "priority", 0, 7));
  if (!prio) return invalidConfig("\"lossless.priority\" (0-7) is required");
  lc.priority = static_cast<int>(*prio);
  RDMANET_ASSIGN_OR_RETURN(auto check, optEnumAt<LosslessCheck>(*l, "check", "lossless.check",
                                                                kLosslessChecks, unsupportedWord));
  lc.check = check.value_or(LosslessCheck::kWarn);
  if (c.vlan_qos && *c.vlan_qos != lc.priority) {
    return invalidConfig(fmt::format("\"vlanQoS\" {} differs from \"lossless.priority\" {}",
                                     *c.vlan_qos, lc.priority));
  }
  c.lossless = lc;
  return okStatus();
}

Status parseIpam(const json& doc, NetConf& c) {
  RDMANET_ASSIGN_OR_RETURN(const json* ipam, optObject(doc, "ipam"));
  if (ipam == nullptr || ipam->empty()) return okStatus();
  RDMANET_ASSIGN_OR_RETURN(auto type, optString(*ipam, "type"));
  if (!type || type->empty())
    return invalidConfig("\"ipam.type\" is required when \"ipam\" is set");
  if (!isPlainFileName(*type)) {
    return invalidConfig(fmt::format("\"ipam.type\" must be a plain file name, not \"{}\"", *type));
  }
  c.ipam = *ipam;
  c.ipam_type = *type;
  return okStatus();
}

Status parseIps(const json& arr, std::string_view key, std::vector<IpPrefix>& out) {
  for (const auto& ip : arr) {
    if (!ip.is_string()) return jsonTypeError(key, "an array of CIDR strings");
    auto p = IpPrefix::parse(ip.get<std::string>());
    if (!p.ok()) return p.error().context(key);
    out.push_back(*p);
  }
  return okStatus();
}

// A MAC or IPs from a pod-controlled channel, without the network's opt-in.
Error podChoice(std::string_view what, std::string_view from, std::string_view key) {
  return invalidConfig(
      fmt::format("{} sets the pod's {}, which this network does not allow (set \"{}\": "
                  "true in the network to let pods choose it)",
                  from, what, key));
}

Status parseRuntime(const json& doc, Command command, const CniArgs& args, NetConf& c) {
  RDMANET_ASSIGN_OR_RETURN(auto dev_id, pciField(doc, "deviceID"));
  RDMANET_ASSIGN_OR_RETURN(auto bus_id, pciField(doc, "pciBusID"));
  c.device_id = dev_id ? dev_id : bus_id;
  RDMANET_ASSIGN_OR_RETURN(c.mac, macField(doc, "mac"));
  RDMANET_ASSIGN_OR_RETURN(auto allow_mac, optBool(doc, "allowPodMac"));
  RDMANET_ASSIGN_OR_RETURN(auto allow_ips, optBool(doc, "allowPodIPs"));
  c.allow_pod_mac = allow_mac.value_or(false);
  c.allow_pod_ips = allow_ips.value_or(false);
  // Only ADD and CHECK act on a pod's choice; DEL and GC must go through whatever was passed.
  const bool enforce = command == Command::kAdd || command == Command::kCheck;
  auto podMac = [&](std::string_view from) -> Status {
    if (enforce && !c.allow_pod_mac) return podChoice("MAC", from, "allowPodMac");
    return okStatus();
  };
  auto podIps = [&](std::string_view from) -> Status {
    if (enforce && !c.allow_pod_ips) return podChoice("IPs", from, "allowPodIPs");
    return okStatus();
  };

  // Conventions: args.cni.{mac,ips} (Multus puts a pod's cni-args there).
  RDMANET_ASSIGN_OR_RETURN(const json* a, optObject(doc, "args"));
  if (a != nullptr) {
    RDMANET_ASSIGN_OR_RETURN(const json* cni, optObject(*a, "cni"));
    if (cni != nullptr) {
      RDMANET_ASSIGN_OR_RETURN(auto m, macField(*cni, "mac"));
      if (m) {
        RDMANET_RETURN_IF_ERROR(podMac("args.cni.mac"));
        c.mac = m;
      }
      RDMANET_ASSIGN_OR_RETURN(const json* ips, optArray(*cni, "ips"));
      if (ips != nullptr) {
        RDMANET_RETURN_IF_ERROR(podIps("args.cni.ips"));
        RDMANET_RETURN_IF_ERROR(parseIps(*ips, "args.cni.ips", c.runtime_ips));
      }
    }
  }
  if (!args.mac.empty()) {
    auto m = MacAddress::parse(args.mac);
    if (!m.ok()) return makeError(ErrorCode::kInvalidEnv, "CNI_ARGS MAC is not a MAC address");
    RDMANET_RETURN_IF_ERROR(podMac("CNI_ARGS MAC"));
    c.mac = *m;
  }
  // IP= is read by the IPAM delegate (static), not here: refused the same way.
  if (!args.ip.empty()) RDMANET_RETURN_IF_ERROR(podIps("CNI_ARGS IP"));
  RDMANET_ASSIGN_OR_RETURN(const json* rc, optObject(doc, "runtimeConfig"));
  if (rc == nullptr) return okStatus();
  RDMANET_ASSIGN_OR_RETURN(auto rc_dev, pciField(*rc, "deviceID"));
  if (rc_dev) {
    // Multus writes the device kubelet allocated into deviceID/pciBusID as well: the same
    // address there is that device. Any other is the pod's own choice.
    if (!c.device_id || *c.device_id != *rc_dev) c.pod_device_id = rc_dev;
    c.device_id = rc_dev;
  }
  RDMANET_ASSIGN_OR_RETURN(auto rc_mac, macField(*rc, "mac"));
  if (rc_mac) {
    RDMANET_RETURN_IF_ERROR(podMac("runtimeConfig.mac"));
    c.mac = rc_mac;
  }
  RDMANET_ASSIGN_OR_RETURN(const json* ips, optArray(*rc, "ips"));
  if (ips != nullptr && !ips->empty()) RDMANET_RETURN_IF_ERROR(podIps("runtimeConfig.ips"));
  if (ips != nullptr) {
    c.runtime_ips.clear();
    RDMANET_RETURN_IF_ERROR(parseIps(*ips, "runtimeConfig.ips", c.runtime_ips));
  }
  RDMANET_ASSIGN_OR_RETURN(auto dif, optString(*rc, "CNIDeviceInfoFile"));
  if (dif && !dif->empty()) {
    if (!isSafeAbsPath(*dif)) {
      return invalidConfig(
          "\"runtimeConfig.CNIDeviceInfoFile\" must be an absolute path without '..'");
    }
    c.device_info_file = *dif;
  }
  return okStatus();
}

Status parseAttachments(const json& doc, NetConf& c) {
  for (const char* key : {"cni.dev/valid-attachments", "cni.dev/attachments"}) {
    RDMANET_ASSIGN_OR_RETURN(const json* arr, optArray(doc, key));
    if (arr == nullptr) continue;
    c.has_valid_attachments = true;
    c.valid_attachments.clear();
    for (const auto& a : *arr) {
      if (!a.is_object()) return jsonTypeError(key, "an array of {containerID, ifname} objects");
      RDMANET_ASSIGN_OR_RETURN(auto id, optString(a, "containerID"));
      RDMANET_ASSIGN_OR_RETURN(auto ifname, optString(a, "ifname"));
      c.valid_attachments.push_back({id.value_or(""), ifname.value_or("")});
    }
    break;
  }
  return okStatus();
}

}  // namespace

std::string_view modeName(Mode m) { return nameOf<Mode>(kModes, m); }

uint8_t NetConf::pcp() const {
  if (lossless) return static_cast<uint8_t>(lossless->priority);
  return vlan_qos.value_or(0);
}

bool isPlainFileName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || !std::isprint(static_cast<unsigned char>(c)) || c == ' ') return false;
  }
  return true;
}

Result<NetConf> parseNetConf(std::string_view text, Command command, const CniArgs& args) {
  if (text.size() > kMaxConfigBytes) {
    return invalidConfig(fmt::format("network configuration exceeds the limit of {} bytes on stdin",
                                     kMaxConfigBytes));
  }
  RDMANET_ASSIGN_OR_RETURN(json doc, parseJson(text, kConfigLimits));
  // What the state file will hold is the document written back out, where numbers take their
  // full form: bound that too, so DEL can always read what ADD saved.
  const size_t canonical = dumpJson(doc).size();
  if (canonical > kMaxConfigBytes) {
    return invalidConfig(fmt::format(
        "network configuration is {} bytes once its numbers are written out, above the limit of "
        "{} bytes",
        canonical, kMaxConfigBytes));
  }
  return parseNetConfJson(doc, command, args);
}

Result<NetConf> parseNetConfJson(const json& doc, Command command, const CniArgs& args) {
  if (!doc.is_object()) return invalidConfig("network configuration must be a JSON object");
  NetConf c;
  RDMANET_ASSIGN_OR_RETURN(auto version, optString(doc, "cniVersion"));
  if (!version || version->empty()) return invalidConfig("\"cniVersion\" is required");
  c.cni_version = *version;
  RDMANET_RETURN_IF_ERROR(checkSupported(c.cni_version));
  if (command == Command::kCheck && !versionAtLeast(c.cni_version, "0.4.0")) {
    return makeError(ErrorCode::kIncompatibleVersion,
                     fmt::format("config version {} does not allow CHECK", c.cni_version));
  }
  if ((command == Command::kGc || command == Command::kStatus) &&
      !versionAtLeast(c.cni_version, "1.1.0")) {
    return makeError(
        ErrorCode::kIncompatibleVersion,
        fmt::format("config version {} does not allow {}", c.cni_version, commandName(command)));
  }
  RDMANET_ASSIGN_OR_RETURN(auto name, optString(doc, "name"));
  RDMANET_ASSIGN_OR_RETURN(auto type, optString(doc, "type"));
  c.name = name.value_or("");
  c.type = type.value_or("");

  RDMANET_RETURN_IF_ERROR(parseModeKeys(doc, c));
  RDMANET_ASSIGN_OR_RETURN(auto device, optString(doc, "device"));
  RDMANET_ASSIGN_OR_RETURN(auto master, optString(doc, "master"));
  c.device = device.value_or("");
  c.master = master.value_or("");
  if (!c.device.empty() && !isValidIfname(c.device)) {
    return invalidConfig(fmt::format("\"device\" \"{}\" is not a valid interface name", c.device));
  }
  if (!c.master.empty() && !isValidIfname(c.master)) {
    return invalidConfig(fmt::format("\"master\" \"{}\" is not a valid interface name", c.master));
  }
  RDMANET_ASSIGN_OR_RETURN(c.hwaddr, macField(doc, "hwaddr"));
  RDMANET_ASSIGN_OR_RETURN(auto kpath, optString(doc, "kernelpath"));
  if (kpath && !kpath->empty()) return unsupported("kernelpath", *kpath, "use device or pciBusID");
  RDMANET_ASSIGN_OR_RETURN(auto lic, optBool(doc, "linkInContainer"));
  if (lic.value_or(false)) return unsupported("linkInContainer", "true", "false");

  RDMANET_ASSIGN_OR_RETURN(auto mtu, optInt(doc, "mtu", 0, 65535));
  if (mtu && *mtu != 0) {
    if (*mtu < 68) return invalidConfig(fmt::format("\"mtu\" is {}, below the minimum 68", *mtu));
    c.mtu = static_cast<uint32_t>(*mtu);
  }
  RDMANET_RETURN_IF_ERROR(parseVfKeys(doc, c));
  RDMANET_RETURN_IF_ERROR(parseLossless(doc, c));
  RDMANET_RETURN_IF_ERROR(parseIpam(doc, c));
  RDMANET_ASSIGN_OR_RETURN(auto rdma, optBool(doc, "rdma"));
  c.rdma = rdma.value_or(true);
  RDMANET_ASSIGN_OR_RETURN(auto level, optString(doc, "logLevel"));
  RDMANET_ASSIGN_OR_RETURN(auto file, optString(doc, "logFile"));
  c.log_level = level.value_or("");
  c.log_file = file.value_or("");
  RDMANET_ASSIGN_OR_RETURN(auto pid, optString(doc, "podInfoDir"));
  if (pid && !pid->empty()) {
    if (!isSafeAbsPath(*pid))
      return invalidConfig("\"podInfoDir\" must be an absolute path without '..'");
    c.pod_info_dir = *pid;
  }
  RDMANET_ASSIGN_OR_RETURN(auto dra_dir, optString(doc, "draDevicesDir"));
  if (dra_dir && !dra_dir->empty()) {
    if (!isSafeAbsPath(*dra_dir))
      return invalidConfig("\"draDevicesDir\" must be an absolute path without '..'");
    c.dra_devices_dir = *dra_dir;
  }
  RDMANET_ASSIGN_OR_RETURN(auto resource, optString(doc, "resourceName"));
  c.resource_name = resource.value_or("");
  if (!c.dra_devices_dir.empty() && c.resource_name.empty()) {
    return invalidConfig("\"draDevicesDir\" needs \"resourceName\" (the pool, e.g. rdma/vf)");
  }
  if (!c.log_file.empty() && !isSafeAbsPath(c.log_file)) {
    return invalidConfig("\"logFile\" must be an absolute path without '..'");
  }
  RDMANET_RETURN_IF_ERROR(parseRuntime(doc, command, args, c));
  RDMANET_ASSIGN_OR_RETURN(const json* prev, optObject(doc, "prevResult"));
  if (prev != nullptr) c.prev_result = *prev;
  RDMANET_RETURN_IF_ERROR(parseAttachments(doc, c));

  // What can be checked without the node: each mode's required key. A deviceID may still come
  // from the pod's DRA claim (claimed_device.h), looked up once the pod is known.
  const bool claimable = !c.dra_devices_dir.empty() && !args.pod_uid.empty();
  if ((command == Command::kAdd || command == Command::kCheck) && !claimable) {
    if (c.mode == Mode::kSriov && !c.device_id) {
      return invalidConfig("mode sriov needs \"deviceID\" (from the device plugin via Multus)");
    }
    if (c.mode == Mode::kMacvlan && c.master.empty())
      return invalidConfig("mode macvlan needs \"master\"");
    if (c.mode == Mode::kHostDevice && !c.device_id && c.device.empty() && !c.hwaddr) {
      return invalidConfig(
          "mode host-device needs \"device\", \"hwaddr\", \"pciBusID\" or \"deviceID\" (for a "
          "network with a resource, Multus passes the device kubelet allocated to the pod: the "
          "pod must request the resource)");
    }
    if (!c.mode && !c.device_id && c.device.empty() && !c.hwaddr && c.master.empty()) {
      return invalidConfig(
          "one of \"deviceID\", \"pciBusID\", \"device\", \"hwaddr\" or \"master\" is "
          "required");
    }
  }
  c.raw = doc;
  return c;
}

}  // namespace rdmanet::cni
