#pragma once
// The CNI_* environment of one invocation, parsed and validated.
//
// Everything here is untrusted runtime input: the container id and ifname end up in file names
// and netlink requests, the netns path is opened, CNI_PATH is searched for IPAM executables.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::cni {

enum class Command { kAdd, kDel, kCheck, kGc, kStatus, kVersion };
std::string_view commandName(Command c);

// CNI_ARGS, "K=V;K2=V2". Known keys are kept; unknown keys are an error unless IgnoreUnknown.
struct CniArgs {
  bool ignore_unknown = false;
  std::string mac;  // MAC=
  std::string ip;   // IP= (forwarded to IPAM as-is, which is where the static plugin reads it)
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_infra_container_id;
  std::string pod_uid;
  std::vector<std::pair<std::string, std::string>> all;  // every pair, in order
};
// Error 4 (naming CNI_ARGS and the offending pair) on a malformed pair or an unknown key
// without IgnoreUnknown.
Result<CniArgs> parseCniArgs(std::string_view text);

struct CniEnv {
  Command command = Command::kVersion;
  std::string container_id;
  std::string netns;  // may be empty for DEL, GC, STATUS, VERSION
  std::string ifname;
  CniArgs args;
  std::string args_raw;
  std::vector<std::string> path;  // CNI_PATH split on ':'
};

using EnvLookup = std::function<std::optional<std::string>(const char*)>;
// Reads and validates the environment through `lookup` (getenv in production). Error 4 names
// the missing or invalid variable.
Result<CniEnv> parseEnv(const EnvLookup& lookup);

// Spec rules: container id starts alphanumeric, then [A-Za-z0-9_.-]; at most 255 bytes here
// because it becomes part of file names.
bool isValidContainerId(std::string_view id);
// Kernel interface-name rule: 1..15 bytes, not "." or "..", no '/', ':' or whitespace.
bool isValidIfname(std::string_view name);
// Absolute, no "." or ".." component, no NUL; the nsfs check happens when it is opened.
bool isPlausibleNetnsPath(std::string_view path);

}  // namespace rdmanet::cni
