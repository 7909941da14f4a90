#include "cni/conf/result_types.h"

#include <fmt/format.h>

#include "cni/conf/json_util.h"
#include "cni/conf/version.h"
#include "common/json/json_fields.h"

namespace rdmanet::cni {
namespace {

Result<std::optional<IpAddress>> optIp(const json& obj, std::string_view key) {
  RDMANET_ASSIGN_OR_RETURN(auto s, optString(obj, key));
  if (!s || s->empty()) return std::optional<IpAddress>();
  auto ip = IpAddress::parse(*s);
  if (!ip.ok()) return ip.error().context(key);
  return std::optional<IpAddress>(*ip);
}

Result<IpPrefix> reqPrefix(const json& obj, std::string_view key) {
  RDMANET_ASSIGN_OR_RETURN(auto s, optString(obj, key));
  if (!s) return missing(key);
  auto p = IpPrefix::parse(*s);
  if (!p.ok()) return p.error().context(key);
  return *p;
}

Result<std::optional<int>> optSmall(const json& obj, std::string_view key) {
  RDMANET_ASSIGN_OR_RETURN(auto v, optInt(obj, key, INT32_MIN, INT32_MAX));
  if (!v) return std::optional<int>();
  return std::optional<int>(static_cast<int>(*v));
}

Result<std::vector<std::string>> stringList(const json& obj, std::string_view key) {
  std::vector<std::string> out;
  RDMANET_ASSIGN_OR_RETURN(const json* arr, optArray(obj, key));
  if (arr == nullptr) return out;
  for (const auto& s : *arr) {
    if (!s.is_string()) return jsonTypeError(key, "an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

Result<CniRoute> parseRoute(const json& r) {
  if (!r.is_object()) return jsonTypeError("routes", "an array of objects");
  CniRoute route;
  RDMANET_ASSIGN_OR_RETURN(route.dst, reqPrefix(r, "dst"));
  RDMANET_ASSIGN_OR_RETURN(route.gw, optIp(r, "gw"));
  RDMANET_ASSIGN_OR_RETURN(route.mtu, optSmall(r, "mtu"));
  RDMANET_ASSIGN_OR_RETURN(route.advmss, optSmall(r, "advmss"));
  RDMANET_ASSIGN_OR_RETURN(route.priority, optSmall(r, "priority"));
  RDMANET_ASSIGN_OR_RETURN(route.table, optSmall(r, "table"));
  RDMANET_ASSIGN_OR_RETURN(route.scope, optSmall(r, "scope"));
  return route;
}

// 0.2.0: {"ip4": {"ip", "gateway", "routes"}, "ip6": {...}}.
Status parseLegacyIp(const json& j, std::string_view key, CniResult& r) {
  RDMANET_ASSIGN_OR_RETURN(const json* o, optObject(j, key));
  if (o == nullptr) return okStatus();
  CniIp ip;
  RDMANET_ASSIGN_OR_RETURN(ip.address, reqPrefix(*o, "ip"));
  RDMANET_ASSIGN_OR_RETURN(ip.gateway, optIp(*o, "gateway"));
  r.ips.push_back(ip);
  RDMANET_ASSIGN_OR_RETURN(const json* routes, optArray(*o, "routes"));
  if (routes != nullptr) {
    for (const auto& rt : *routes) {
      RDMANET_ASSIGN_OR_RETURN(auto route, parseRoute(rt));
      r.routes.push_back(route);
    }
  }
  return okStatus();
}

json routeJson(const CniRoute& r, bool v11) {
  json o = {{"dst", r.dst.str()}};
  if (r.gw) o["gw"] = r.gw->str();
  if (v11) {
    if (r.mtu) o["mtu"] = *r.mtu;
    if (r.advmss) o["advmss"] = *r.advmss;
    if (r.priority) o["priority"] = *r.priority;
    if (r.table) o["table"] = *r.table;
    if (r.scope) o["scope"] = *r.scope;
  }
  return o;
}

}  // namespace

Result<CniResult> parseResult(const json& j) {
  if (!j.is_object()) return jsonTypeError("result", "an object");
  CniResult r;
  RDMANET_ASSIGN_OR_RETURN(auto version, optString(j, "cniVersion"));
  r.cni_version = version.value_or("");
  RDMANET_ASSIGN_OR_RETURN(const json* ifaces, optArray(j, "interfaces"));
  if (ifaces != nullptr) {
    for (const auto& i : *ifaces) {
      if (!i.is_object()) return jsonTypeError("interfaces", "an array of objects");
      CniInterface iface;
      RDMANET_ASSIGN_OR_RETURN(auto name, optString(i, "name"));
      RDMANET_ASSIGN_OR_RETURN(auto mac, optString(i, "mac"));
      RDMANET_ASSIGN_OR_RETURN(auto mtu, optInt(i, "mtu", 0, UINT32_MAX));
      RDMANET_ASSIGN_OR_RETURN(auto sandbox, optString(i, "sandbox"));
      RDMANET_ASSIGN_OR_RETURN(auto sock, optString(i, "socketPath"));
      RDMANET_ASSIGN_OR_RETURN(auto pci, optString(i, "pciID"));
      iface.name = name.value_or("");
      iface.mac = mac.value_or("");
      if (mtu) iface.mtu = static_cast<uint32_t>(*mtu);
      iface.sandbox = sandbox.value_or("");
      iface.socket_path = sock.value_or("");
      iface.pci_id = pci.value_or("");
      r.interfaces.push_back(std::move(iface));
    }
  }
  RDMANET_ASSIGN_OR_RETURN(const json* ips, optArray(j, "ips"));
  if (ips != nullptr) {
    for (const auto& i : *ips) {
      if (!i.is_object()) return jsonTypeError("ips", "an array of objects");
      CniIp ip;
      RDMANET_ASSIGN_OR_RETURN(ip.address, reqPrefix(i, "address"));
      RDMANET_ASSIGN_OR_RETURN(ip.gateway, optIp(i, "gateway"));
      RDMANET_ASSIGN_OR_RETURN(auto idx, optInt(i, "interface", 0, 1 << 20));
      if (idx) {
        if (*idx >= static_cast<int64_t>(r.interfaces.size())) {
          return makeError(ErrorCode::kInvalidConfig,
                           fmt::format("ips: interface index {} is out of range", *idx));
        }
        ip.interface = static_cast<int>(*idx);
      }
      r.ips.push_back(ip);
    }
  }
  RDMANET_RETURN_IF_ERROR(parseLegacyIp(j, "ip4", r));
  RDMANET_RETURN_IF_ERROR(parseLegacyIp(j, "ip6", r));
  RDMANET_ASSIGN_OR_RETURN(const json* routes, optArray(j, "routes"));
  if (routes != nullptr) {
    for (const auto& rt : *routes) {
      RDMANET_ASSIGN_OR_RETURN(auto route, parseRoute(rt));
      r.routes.push_back(route);
    }
  }
  RDMANET_ASSIGN_OR_RETURN(const json* dns, optObject(j, "dns"));
  if (dns != nullptr) {
    RDMANET_ASSIGN_OR_RETURN(r.dns.nameservers, stringList(*dns, "nameservers"));
    RDMANET_ASSIGN_OR_RETURN(auto domain, optString(*dns, "domain"));
    r.dns.domain = domain.value_or("");
    RDMANET_ASSIGN_OR_RETURN(r.dns.search, stringList(*dns, "search"));
    RDMANET_ASSIGN_OR_RETURN(r.dns.options, stringList(*dns, "options"));
  }
  return r;
}

json resultToJson(const CniResult& r, std::string_view version) {
  const bool v1 = versionAtLeast(version, "1.0.0");
  const bool v11 = versionAtLeast(version, "1.1.0");
  json out = {{"cniVersion", std::string(version)}};
  if (!r.interfaces.empty()) {
    json arr = json::array();
    for (const auto& i : r.interfaces) {
      json o = {{"name", i.name}};
      if (!i.mac.empty()) o["mac"] = i.mac;
      if (v11 && i.mtu) o["mtu"] = *i.mtu;
      if (!i.sandbox.empty()) o["sandbox"] = i.sandbox;
      if (v11 && !i.socket_path.empty()) o["socketPath"] = i.socket_path;
      if (v11 && !i.pci_id.empty()) o["pciID"] = i.pci_id;
      arr.push_back(std::move(o));
    }
    out["interfaces"] = std::move(arr);
  }
  json ips = json::array();
  for (const auto& ip : r.ips) {
    json o;
    if (!v1) o["version"] = ip.address.address.isV4() ? "4" : "6";
    o["address"] = ip.address.str();
    if (ip.gateway) o["gateway"] = ip.gateway->str();
    if (ip.interface) o["interface"] = *ip.interface;
    ips.push_back(std::move(o));
  }
  if (!ips.empty()) out["ips"] = std::move(ips);
  if (!r.routes.empty()) {
    json routes = json::array();
    for (const auto& rt : r.routes) routes.push_back(routeJson(rt, v11));
    out["routes"] = std::move(routes);
  }
  json dns = json::object();
  if (!r.dns.nameservers.empty()) dns["nameservers"] = r.dns.nameservers;
  if (!r.dns.domain.empty()) dns["domain"] = r.dns.domain;
  if (!r.dns.search.empty()) dns["search"] = r.dns.search;
  if (!r.dns.options.empty()) dns["options"] = r.dns.options;
  out["dns"] = std::move(dns);
  return out;
}

json errorToJson(const Error& e, std::string_view version) {
  json out = {
      {"cniVersion", std::string(version)}, {"code", static_cast<int>(e.code)}, {"msg", e.msg}};
  if (!e.details.empty()) out["details"] = e.details;
  return out;
}

}  // namespace rdmanet::cni
