#include "cni/state/attachment_state.h"

#include <concepts>
#include <cstdint>
#include <limits>

#include "cni/conf/json_util.h"

namespace rdmanet::cni {
namespace {

std::optional<Mode> modeOf(const std::string& s) {
  if (s == "sriov") return Mode::kSriov;
  if (s == "macvlan") return Mode::kMacvlan;
  if (s == "host-device") return Mode::kHostDevice;
  return std::nullopt;
}

json vfJson(const VfInfo& v) {
  return {{"index", v.index},
          {"mac", v.mac.str()},
          {"vlan", v.vlan},
          {"qos", v.qos},
          {"proto", v.vlan_proto},
          {"spoofchk", v.spoofchk},
          {"trust", v.trust},
          {"link_state", static_cast<int>(v.link_state)},
          {"min_tx_rate", v.min_tx_rate},
          {"max_tx_rate", v.max_tx_rate}};
}

// An integer of the state file within [lo, hi] (T's range by default), or `fallback` when
// absent: anything else makes the file invalid, as a wrong type does (error 5, like a torn file).
template <std::integral T>
Result<T> stateInt(const json& j, std::string_view key, T fallback,
                   int64_t lo = std::numeric_limits<T>::min(),
                   int64_t hi = std::numeric_limits<T>::max()) {
  auto n = intOr<T>(j, key, fallback, lo, hi);
  if (!n.ok()) return makeError(ErrorCode::kIoFailure, "state file is invalid", n.error().msg);
  return n;
}

Result<VfInfo> vfFrom(const json& j) {
  VfInfo v;
  RDMANET_ASSIGN_OR_RETURN(v.index, stateInt(j, "index", 0, 0, INT32_MAX));
  v.mac = MacAddress::parse(j.value("mac", "00:00:00:00:00:00")).valueOr(MacAddress{});
  RDMANET_ASSIGN_OR_RETURN(v.vlan, stateInt<uint16_t>(j, "vlan", 0, 0, 4095));
  RDMANET_ASSIGN_OR_RETURN(v.qos, stateInt<uint8_t>(j, "qos", 0, 0, 7));
  RDMANET_ASSIGN_OR_RETURN(v.vlan_proto, stateInt<uint16_t>(j, "proto", 0x8100));
  v.spoofchk = j.value("spoofchk", false);
  v.trust = j.value("trust", false);
  RDMANET_ASSIGN_OR_RETURN(const int link_state, stateInt(j, "link_state", 0, 0, 2));
  v.link_state = static_cast<VfLinkState>(link_state);
  RDMANET_ASSIGN_OR_RETURN(v.min_tx_rate, stateInt<uint32_t>(j, "min_tx_rate", 0));
  RDMANET_ASSIGN_OR_RETURN(v.max_tx_rate, stateInt<uint32_t>(j, "max_tx_rate", 0));
  return v;
}

}  // namespace

json AttachmentState::toJson() const {
  json j = {{"containerID", container_id},
            {"ifname", ifname},
            {"netns", netns},
            {"network", network},
            {"podNamespace", pod_namespace},
            {"podName", pod_name},
            {"podUid", pod_uid},
            {"priority", priority},
            {"cniVersion", cni_version},
            {"mode", std::string(modeName(mode))},
            {"complete", complete},
            {"hostIfname", host_ifname},
            {"hostIfindex", host_ifindex},
            {"pci", pci},
            {"origMac", orig_mac.str()},
            {"origMtu", orig_mtu},
            {"origUp", orig_up},
            {"pfName", pf_name},
            {"pfPci", pf_pci},
            {"vfIndex", vf_index},
            {"vfKnobsSet", vf_knobs_set},
            {"vlanLink", vlan_link},
            {"podLower", pod_lower},
            {"rdmaMoved", rdma_moved},
            {"podIfindex", pod_ifindex},
            {"deviceInfoFile", device_info_file},
            {"podInfoDir", pod_info_dir},
            {"ipam", ipam},
            {"ipamType", ipam_type},
            {"ipamVersion", ipam_version},
            {"conf", raw_conf},
            {"result", result}};
  if (orig_vf) j["origVf"] = vfJson(*orig_vf);
  if (has_identity) {
    j["device"] = {{"parent", dev_parent},
                   {"permMac", dev_perm_mac.str()},
                   {"kind", dev_kind},
                   {"podIfindex", dev_pod_ifindex}};
  }
  if (!boot_id.empty()) j["bootId"] = boot_id;
  if (added_ns != 0) j["addedNs"] = added_ns;
  return j;
}

Result<AttachmentState> AttachmentState::fromJson(const json& j) {
  if (!j.is_object()) return makeError(ErrorCode::kIoFailure, "state file is not a JSON object");
  try {
    AttachmentState s;
    s.container_id = j.at("containerID").get<std::string>();
    s.ifname = j.at("ifname").get<std::string>();
    s.netns = j.value("netns", "");
    s.network = j.value("network", "");
    s.pod_namespace = j.value("podNamespace", "");
    s.pod_name = j.value("podName", "");
    s.pod_uid = j.value("podUid", "");
    RDMANET_ASSIGN_OR_RETURN(s.priority, stateInt(j, "priority", 0, 0, 7));
    s.cni_version = j.value("cniVersion", "");
    const auto mode = modeOf(j.value("mode", ""));
    if (!mode) return makeError(ErrorCode::kIoFailure, "state file has an unknown mode");
    s.mode = *mode;
    s.complete = j.value("complete", false);
    s.host_ifname = j.value("hostIfname", "");
    RDMANET_ASSIGN_OR_RETURN(s.host_ifindex, stateInt(j, "hostIfindex", 0, 0, INT32_MAX));
    s.pci = j.value("pci", "");
    s.orig_mac = MacAddress::parse(j.value("origMac", "")).valueOr(MacAddress{});
    RDMANET_ASSIGN_OR_RETURN(s.orig_mtu, stateInt<uint32_t>(j, "origMtu", 0));
    s.orig_up = j.value("origUp", false);
    s.pf_name = j.value("pfName", "");
    s.pf_pci = j.value("pfPci", "");
    RDMANET_ASSIGN_OR_RETURN(s.vf_index, stateInt(j, "vfIndex", -1, -1, INT32_MAX));
    if (j.contains("origVf") && j["origVf"].is_object()) {
      RDMANET_ASSIGN_OR_RETURN(s.orig_vf, vfFrom(j["origVf"]));
    }
    s.vf_knobs_set = j.value("vfKnobsSet", std::vector<std::string>{});
    s.vlan_link = j.value("vlanLink", "");
    s.pod_lower = j.value("podLower", "");
    s.rdma_moved = j.value("rdmaMoved", std::vector<std::string>{});
    RDMANET_ASSIGN_OR_RETURN(s.pod_ifindex, stateInt(j, "podIfindex", 0, 0, INT32_MAX));
    s.device_info_file = j.value("deviceInfoFile", "");
    s.pod_info_dir = j.value("podInfoDir", "");
    s.ipam = j.value("ipam", json());
    s.ipam_type = j.value("ipamType", "");
    s.ipam_version = j.value("ipamVersion", "");
    s.raw_conf = j.value("conf", json());
    s.result = j.value("result", json());
    if (const auto d = j.find("device"); d != j.end() && d->is_object()) {
      s.has_identity = true;
      s.dev_parent = d->value("parent", "");
      s.dev_perm_mac = MacAddress::parse(d->value("permMac", "")).valueOr(MacAddress{});
      s.dev_kind = d->value("kind", "");
      RDMANET_ASSIGN_OR_RETURN(s.dev_pod_ifindex, stateInt(*d, "podIfindex", 0, 0, INT32_MAX));
    }
    s.boot_id = j.value("bootId", "");
    RDMANET_ASSIGN_OR_RETURN(s.added_ns, stateInt<int64_t>(j, "addedNs", 0, 0, INT64_MAX));
    return s;
  } catch (const json::exception& e) {
    return makeError(ErrorCode::kIoFailure, "state file is invalid", e.what());
  }
}

AttachmentState AttachmentState::forInvocation(const CniEnv& env, const NetConf& conf) {
  AttachmentState st;
  st.container_id = env.container_id;
  st.ifname = env.ifname;
  st.netns = env.netns;
  st.network = conf.name;
  st.pod_namespace = env.args.pod_namespace;
  st.pod_name = env.args.pod_name;
  st.pod_uid = env.args.pod_uid;
  st.priority = conf.pcp();
  st.cni_version = conf.cni_version;
  st.ipam = conf.ipam;
  st.ipam_type = conf.ipam_type;
  st.raw_conf = conf.raw;
  st.raw_conf.erase("prevResult");
  st.device_info_file = conf.device_info_file;
  return st;
}

}  // namespace rdmanet::cni
