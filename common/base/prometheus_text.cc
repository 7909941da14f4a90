#include "common/base/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>

namespace rdmanet {

namespace {

// Label values escape backslash, double quote and newline; help text backslash and newline.
void appendEscaped(std::string& out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string PrometheusText::formatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += fmt::format("# HELP {} ", name);
  appendEscaped(out_, help, false);
  out_ += fmt::format("\n# TYPE {} {}\n", name, type);
}

void PrometheusText::line(std::string_view name, std::span<const Label> shared,
                          std::initializer_list<Label> own, Label extra, const std::string& value) {
  out_ += name;
  if (!shared.empty() || own.size() > 0 || !extra.first.empty()) {
    char sep = '{';
    auto add = [&](const Label& l) {
      out_ += sep;
      out_ += l.first;
      out_ += "=\"";
      appendEscaped(out_, l.second, true);
      out_ += '"';
      sep = ',';
    };
    for (const Label& l : shared) add(l);
    for (const Label& l : own) add(l);
    if (!extra.first.empty()) add(extra);
    out_ += '}';
  }
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void PrometheusText::histogram(std::string_view name, std::initializer_list<Label> labels,
                               std::span<const double> bounds, std::span<const uint64_t> cumulative,
                               uint64_t count, double sum) {
  const std::string bucket = std::string(name) + "_bucket";
  for (size_t i = 0; i < bounds.size() && i < cumulative.size(); ++i) {
    const std::string le = formatDouble(bounds[i]);
    line(bucket, {}, labels, {"le", le}, std::to_string(cumulative[i]));
  }
  line(bucket, {}, labels, {"le", "+Inf"}, std::to_string(count));
  line(std::string(name) + "_sum", {}, labels, {}, formatDouble(sum));
  line(std::string(name) + "_count", {}, labels, {}, std::to_string(count));
}

}  // namespace rdmanet
