#pragma once
// CNI spec versions: which ones rdmanet speaks, and comparing them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::cni {

// The versions rdmanet accepts in `cniVersion` and can print results in, oldest first.
const std::vector<std::string>& supportedVersions();
inline constexpr std::string_view kLatestVersion = "1.1.0";

// A parsed "major.minor.patch". Comparison is numeric.
struct SpecVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  static std::optional<SpecVersion> parse(std::string_view text);
  auto operator<=>(const SpecVersion&) const = default;
};

// Ok when `version` is one of supportedVersions(); error 1 otherwise (message names it).
Status checkSupported(std::string_view version);
// a >= b for two version strings; unparsable strings compare as 0.0.0.
bool versionAtLeast(std::string_view a, std::string_view b);
// The highest of `theirs` that is also supported by us and not above `ceiling`; nullopt if none.
std::optional<std::string> highestCommon(const std::vector<std::string>& theirs,
                                         std::string_view ceiling);

}  // namespace rdmanet::cni
