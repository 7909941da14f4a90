#include "deviceplugin/daemon/refused_names.h"

#include <fmt/format.h>

#include "deviceplugin/logging.h"

namespace rdmanet::dp {

std::string escapeName(std::string_view raw) {
  std::string out;
  for (const char c : raw) {
    const auto b = static_cast<unsigned char>(c);
    if (b > ' ' && b < 0x7f && c != '\\') {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", b);
    }
  }
  return out;
}

void RefusedNameLog::onRefusedName(std::string_view dir, std::string_view name) {
  std::string key = fmt::format("{}/{}", dir, escapeName(name));
  {
    std::lock_guard lk(mu_);
    if (logged_.size() >= kMaxRemembered) logged_.clear();
    if (!logged_.insert(key).second) return;
  }
  logger(Component::kDiscovery)
      ->warn("{}: a name that is not printable ASCII, left out (its device shows without it)", key);
}

}  // namespace rdmanet::dp
