#pragma once
// The CNI result (what ADD prints, IPAM returns and prevResult carries), version-neutral, plus
// conversion to and from each spec version's JSON.
//
// 0.3.0/0.3.1/0.4.0 give each IP a "version" ("4"/"6"); 1.0.0 drops it; 1.1.0 adds interface
// mtu/socketPath/pciID and route mtu/advmss/priority/table/scope. Older formats drop what they
// cannot carry.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/net/ip.h"

namespace rdmanet::cni {

struct CniInterface {
  // Every member has an initializer so designated initializers may skip any of them.
  std::string name{};
  std::string mac{};
  std::optional<uint32_t> mtu{};  // 1.1.0
  std::string sandbox{};          // netns path for pod interfaces, empty for host ones
  std::string socket_path{};      // 1.1.0
  std::string pci_id{};           // 1.1.0
  bool operator==(const CniInterface&) const = default;
};

struct CniIp {
  IpPrefix address{};  // host address with its prefix length: 10.1.0.5/24
  std::optional<IpAddress> gateway{};
  std::optional<int> interface {};  // index into interfaces
  bool operator==(const CniIp&) const = default;
};

struct CniRoute {
  IpPrefix dst{};
  std::optional<IpAddress> gw{};
  std::optional<int> mtu{}, advmss{}, priority{}, table{}, scope{};  // 1.1.0
  bool operator==(const CniRoute&) const = default;
};

struct CniDns {
  std::vector<std::string> nameservers;
  std::string domain;
  std::vector<std::string> search;
  std::vector<std::string> options;
  bool empty() const {
    return nameservers.empty() && domain.empty() && search.empty() && options.empty();
  }
  bool operator==(const CniDns&) const = default;
};

struct CniResult {
  std::string cni_version;
  std::vector<CniInterface> interfaces;
  std::vector<CniIp> ips;
  std::vector<CniRoute> routes;
  CniDns dns;
  bool operator==(const CniResult&) const = default;
};

// Reads a result of any version 0.3.0 to 1.1.0 (also a 0.2.0 "ip4"/"ip6" one, which old IPAM
// plugins print). Error 7 naming the field on bad types or addresses.
Result<CniResult> parseResult(const nlohmann::json& j);
// The result in `version`'s format (a supported version; see version.h).
nlohmann::json resultToJson(const CniResult& r, std::string_view version);

// The error JSON the spec asks for on stdout.
nlohmann::json errorToJson(const Error& e, std::string_view version);

}  // namespace rdmanet::cni
