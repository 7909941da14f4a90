#include "deviceplugin/logging.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <iterator>
#include <mutex>

#include "common/base/enum_names.h"

namespace rdmanet::dp {

namespace {

// Every component, with the name its logger has.
constexpr EnumName<Component> kAll[] = {
    {"discovery", Component::kDiscovery}, {"server", Component::kServer},
    {"kubelet", Component::kKubelet},     {"health", Component::kHealth},
    {"metrics", Component::kMetrics},     {"config", Component::kConfig},
    {"doctor", Component::kDoctor}};

struct Loggers {
  std::mutex mu;
  std::shared_ptr<spdlog::sinks::stderr_sink_mt> sink =
      std::make_shared<spdlog::sinks::stderr_sink_mt>();
  std::array<std::shared_ptr<spdlog::logger>, std::size(kAll)> byComponent;
  spdlog::level::level_enum level = spdlog::level::info;
};

Loggers& loggers() {
  static Loggers l;  // process-wide by nature: stderr is
  return l;
}

}  // namespace

std::string_view componentName(Component c) { return nameOf<Component>(kAll, c); }

std::shared_ptr<spdlog::logger> logger(Component c) {
  Loggers& l = loggers();
  std::lock_guard lock(l.mu);
  auto& slot = l.byComponent[static_cast<size_t>(c)];
  if (!slot) {
    slot = std::make_shared<spdlog::logger>(std::string(componentName(c)), l.sink);
    slot->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ [%n] %v");
    slot->set_level(l.level);
    slot->flush_on(spdlog::level::trace);
  }
  return slot;
}

Status setLogLevel(std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  // from_str maps unknown names to "off": accept "off" only when asked for.
  if (lvl == spdlog::level::off && level != "off") {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("--log-level: \"{}\" is not one of trace, debug, info, warn, "
                                 "error, off",
                                 level));
  }
  Loggers& l = loggers();
  std::lock_guard lock(l.mu);
  l.level = lvl;
  for (auto& lg : l.byComponent) {
    if (lg) lg->set_level(lvl);
  }
  return okStatus();
}

}  // namespace rdmanet::dp
