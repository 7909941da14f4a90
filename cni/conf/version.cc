#include "cni/conf/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rdmanet::cni {

const std::vector<std::string>& supportedVersions() {
  static const std::vector<std::string> kVersions = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"};
  return kVersions;
}

std::optional<SpecVersion> SpecVersion::parse(std::string_view text) {
  SpecVersion v;
  int* parts[] = {&v.major, &v.minor, &v.patch};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(p, end, *parts[i]);
    if (ec != std::errc() || next == p || *parts[i] < 0) return std::nullopt;
    p = next;
    if (i < 2) {
      if (p == end) return i == 0 ? std::nullopt : std::optional<SpecVersion>(v);  // "1.0"
      if (*p != '.') return std::nullopt;
      ++p;
    }
  }
  if (p != end) return std::nullopt;
  return v;
}

Status checkSupported(std::string_view version) {
  const auto& all = supportedVersions();
  if (std::find(all.begin(), all.end(), version) != all.end()) return okStatus();
  return makeError(
      ErrorCode::kIncompatibleVersion, "incompatible CNI versions",
      fmt::format("config cniVersion \"{}\" is not one of {}", version, fmt::join(all, ", ")));
}

bool versionAtLeast(std::string_view a, std::string_view b) {
  return SpecVersion::parse(a).value_or(SpecVersion{}) >=
         SpecVersion::parse(b).value_or(SpecVersion{});
}

std::optional<std::string> highestCommon(const std::vector<std::string>& theirs,
                                         std::string_view ceiling) {
  const auto& ours = supportedVersions();
  for (auto it = ours.rbegin(); it != ours.rend(); ++it) {
    if (!versionAtLeast(ceiling, *it)) continue;
    if (std::find(theirs.begin(), theirs.end(), *it) != theirs.end()) return *it;
  }
  return std::nullopt;
}

}  // namespace rdmanet::cni
