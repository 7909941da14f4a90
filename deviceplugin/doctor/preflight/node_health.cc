#include "deviceplugin/doctor/preflight/node_health.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

namespace rdmanet::doctor::preflight {
namespace {

struct Sample {
  std::string name{};
  std::map<std::string, std::string> labels{};
  std::string value{};
};

// NAME{k="v",...} VALUE [TIMESTAMP], label values with the format's escapes (\\ \" \n).
std::optional<Sample> parseSample(std::string_view line) {
  Sample s;
  size_t i = line.find_first_of("{ \t");
  if (i == std::string_view::npos || i == 0) return std::nullopt;
  s.name = std::string(line.substr(0, i));
  if (line[i] == '{') {
    ++i;
    for (;;) {
      while (i < line.size() && (line[i] == ' ' || line[i] == ',')) ++i;
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      const size_t eq = line.find('=', i);
      if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
        return std::nullopt;
      }
      std::string key(line.substr(i, eq - i));
      std::string value;
      size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size()) {
          ++j;
          value += line[j] == 'n' ? '\n' : line[j];
        } else {
          value += line[j];
        }
      }
      if (j >= line.size()) return std::nullopt;  // no closing quote
      s.labels[std::move(key)] = std::move(value);
      i = j + 1;
    }
  }
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  const size_t end = line.find_first_of(" \t", i);
  s.value = std::string(line.substr(i, end == std::string_view::npos ? end : end - i));
  if (s.value.empty()) return std::nullopt;
  return s;
}

template <typename T>
std::optional<T> number(const std::string& text) {
  T v{};
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

Error badLine(size_t n, std::string_view line, std::string_view why) {
  return makeError(ErrorCode::kInvalidConfig,
                   fmt::format("metrics line {} \"{}\": {}", n, line, why));
}

}  // namespace

Verdict NodeHealth::checklist() const {
  if (!reached) return Verdict::kUnknown;
  Verdict w = Verdict::kPass;
  for (const auto& c : checks) {
    if (severity(c.verdict) > severity(w)) w = c.verdict;
  }
  return w;
}

std::vector<std::string> NodeHealth::failingChecks() const {
  std::vector<std::string> out;
  for (const auto& c : checks) {
    if (c.verdict != Verdict::kWarn && c.verdict != Verdict::kFail) continue;
    out.push_back(c.device.empty() ? c.check : fmt::format("{} ({})", c.check, c.device));
  }
  return out;
}

Status parseDoctorMetrics(std::string_view text, NodeHealth& into) {
  size_t n = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++n;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool check = line.starts_with("rdmanet_doctor_check");
    const bool counter = line.starts_with("rdmanet_doctor_rdma_counter");
    if (!check && !counter) continue;
    auto s = parseSample(line);
    if (!s) return badLine(n, line, "not a Prometheus sample");
    if (s->name == "rdmanet_doctor_check") {
      const auto v = number<int>(s->value);
      if (!v || *v < 0 || *v > 3) return badLine(n, line, "the value is not a verdict (0 to 3)");
      into.checks.push_back({.check = s->labels["check"],
                             .device = s->labels["device"],
                             .verdict = static_cast<Verdict>(*v)});
    } else if (s->name == "rdmanet_doctor_rdma_counter") {
      auto v = number<uint64_t>(s->value);
      if (!v) {
        // Written as a float by a writer other than ours: whole counts still read.
        const auto d = number<double>(s->value);
        if (!d || *d < 0 || *d > 1.8e19) return badLine(n, line, "the value is not a count");
        v = static_cast<uint64_t>(*d);
      }
      into.counters[s->labels["port"]][s->labels["counter"]] = *v;
    }
  }
  return okStatus();
}

}  // namespace rdmanet::doctor::preflight
