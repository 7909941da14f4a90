#pragma once
// One named spdlog logger per daemon component (CONTRIBUTING.md, "Logging"). Loggers write to
// stderr; the level is set once for all of them by setLogLevel().

#include <spdlog/spdlog.h>

#include <memory>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet::dp {

enum class Component { kDiscovery, kServer, kKubelet, kHealth, kMetrics, kConfig, kDoctor };

std::string_view componentName(Component c);
// The component's logger, created on first use. Thread-safe.
std::shared_ptr<spdlog::logger> logger(Component c);
// "trace", "debug", "info", "warn", "error", "off". Error 7 for anything else.
Status setLogLevel(std::string_view level);

}  // namespace rdmanet::dp
