#include "cni/conf/env.h"

#include <fmt/format.h>

#include <cctype>

#include "common/base/enum_names.h"

namespace rdmanet::cni {
namespace {

Error envError(std::string_view var, std::string_view why) {
  return makeError(ErrorCode::kInvalidEnv, fmt::format("{} {}", var, why));
}

constexpr EnumName<Command> kCommands[] = {
    {"ADD", Command::kAdd}, {"DEL", Command::kDel},       {"CHECK", Command::kCheck},
    {"GC", Command::kGc},   {"STATUS", Command::kStatus}, {"VERSION", Command::kVersion}};

std::optional<Command> parseCommand(std::string_view s) { return enumOf<Command>(kCommands, s); }

// The CNI_ARGS keys that carry a string, each with the field its value goes to.
using ArgField = std::string CniArgs::*;
constexpr EnumName<ArgField> kArgFields[] = {
    {"MAC", &CniArgs::mac},
    {"IP", &CniArgs::ip},
    {"K8S_POD_NAMESPACE", &CniArgs::pod_namespace},
    {"K8S_POD_NAME", &CniArgs::pod_name},
    {"K8S_POD_INFRA_CONTAINER_ID", &CniArgs::pod_infra_container_id},
    {"K8S_POD_UID", &CniArgs::pod_uid}};

bool isArgKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

std::string printable(std::string_view s) {
  // Echo untrusted input in messages only in a bounded, printable form.
  std::string out;
  for (char c : s.substr(0, 64)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (s.size() > 64) out += "...";
  return out;
}

}  // namespace

std::string_view commandName(Command c) { return nameOf<Command>(kCommands, c); }

bool isValidContainerId(std::string_view id) {
  if (id.empty() || id.size() > 255) return false;
  if (!std::isalnum(static_cast<unsigned char>(id[0]))) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

bool isValidIfname(std::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == ':' || c == '\0' || std::isspace(static_cast<unsigned char>(c)) ||
        !std::isprint(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

bool isPlausibleNetnsPath(std::string_view path) {
  if (path.empty() || path.front() != '/' || path.size() > 4096) return false;
  if (path.find('\0') != std::string_view::npos) return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

Result<CniArgs> parseCniArgs(std::string_view text) {
  CniArgs a;
  std::vector<std::pair<std::string, std::string>> unknown;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view pair = text.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return envError("CNI_ARGS",
                      fmt::format("has an invalid pair \"{}\" (want KEY=VALUE)", printable(pair)));
    }
    const std::string key(pair.substr(0, eq));
    const std::string value(pair.substr(eq + 1));
    for (char c : key) {
      if (!isArgKeyChar(c)) {
        return envError("CNI_ARGS", fmt::format("has an invalid key \"{}\"", printable(key)));
      }
    }
    a.all.emplace_back(key, value);
    if (key == "IgnoreUnknown") {
      a.ignore_unknown = value == "1" || value == "true" || value == "True";
    } else if (const auto field = enumOf<ArgField>(kArgFields, key)) {
      a.*(*field) = value;
    } else {
      unknown.emplace_back(key, value);
    }
  }
  if (!unknown.empty() && !a.ignore_unknown) {
    return envError("CNI_ARGS", fmt::format("has unknown key \"{}\" (set IgnoreUnknown=1 to allow)",
                                            printable(unknown.front().first)));
  }
  return a;
}

Result<CniEnv> parseEnv(const EnvLookup& lookup) {
  CniEnv env;
  const auto cmd_text = lookup("CNI_COMMAND");
  if (!cmd_text || cmd_text->empty()) return envError("CNI_COMMAND", "is not set");
  const auto cmd = parseCommand(*cmd_text);
  if (!cmd) {
    return envError("CNI_COMMAND",
                    fmt::format("\"{}\" is not one of ADD, DEL, CHECK, GC, STATUS, VERSION",
                                printable(*cmd_text)));
  }
  env.command = *cmd;
  if (env.command == Command::kVersion) return env;

  const bool per_attachment = env.command == Command::kAdd || env.command == Command::kDel ||
                              env.command == Command::kCheck;
  if (per_attachment) {
    const auto id = lookup("CNI_CONTAINERID");
    if (!id || id->empty()) return envError("CNI_CONTAINERID", "is not set");
    if (!isValidContainerId(*id)) {
      return envError("CNI_CONTAINERID",
                      fmt::format("\"{}\" is invalid: it must start with a letter or digit and "
                                  "contain only letters, digits, '_', '.' and '-'",
                                  printable(*id)));
    }
    env.container_id = *id;

    const auto ifname = lookup("CNI_IFNAME");
    if (!ifname || ifname->empty()) return envError("CNI_IFNAME", "is not set");
    if (!isValidIfname(*ifname)) {
      return envError("CNI_IFNAME", fmt::format("\"{}\" is not a valid interface name (1-15 "
                                                "bytes, no '/', ':' or whitespace)",
                                                printable(*ifname)));
    }
    env.ifname = *ifname;

    const auto netns = lookup("CNI_NETNS");
    if (netns && !netns->empty()) {
      if (!isPlausibleNetnsPath(*netns)) {
        return envError("CNI_NETNS", fmt::format("\"{}\" is not an absolute path without '..'",
                                                 printable(*netns)));
      }
      env.netns = *netns;
    } else if (env.command != Command::kDel) {
      // DEL without a netns must still clean up; ADD and CHECK cannot work without one.
      return envError("CNI_NETNS", "is not set");
    }
  }

  const auto args = lookup("CNI_ARGS");
  if (args && !args->empty()) {
    RDMANET_ASSIGN_OR_RETURN(env.args, parseCniArgs(*args));
    env.args_raw = *args;
  }

  const auto path = lookup("CNI_PATH");
  if (!path || path->empty()) return envError("CNI_PATH", "is not set");
  size_t start = 0;
  while (start <= path->size()) {
    size_t end = path->find(':', start);
    if (end == std::string::npos) end = path->size();
    std::string dir = path->substr(start, end - start);
    if (!dir.empty()) env.path.push_back(std::move(dir));
    start = end + 1;
  }
  return env;
}

}  // namespace rdmanet::cni
