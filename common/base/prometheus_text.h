#pragma once
// PrometheusText: the one writer of Prometheus' text exposition format (0.0.4) in rdmanet. The
// daemon's series (deviceplugin/metrics.h) and the doctor's (deviceplugin/doctor/render.h) are
// both written with it, so escaping and number formatting are done once.
//
//   PrometheusText out;
//   out.family("rdmanet_dp_devices", "gauge", "Devices advertised per pool.");
//   out.sample("rdmanet_dp_devices", {{"resource", "rdma/vf"}, {"health", "healthy"}}, 3);
//   std::string text = std::move(out).str();
//
// Label values and help text are escaped here (backslash, double quote in label values,
// newline). Metric and label names are the caller's constants and must already be valid
// ([a-zA-Z_:][a-zA-Z0-9_:]*); they are written as given.

#include <concepts>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace rdmanet {

class PrometheusText {
 public:
  using Label = std::pair<std::string_view, std::string_view>;

  // "# HELP" and "# TYPE" lines opening a family; `type` is counter, gauge or histogram.
  void family(std::string_view name, std::string_view type, std::string_view help);

  // One sample line. Integers are written exactly; floating values in their shortest form that
  // reads back the same, with +Inf, -Inf and NaN spelled as the format wants.
  template <typename T>
  requires std::integral<T> || std::floating_point<T>
  void sample(std::string_view name, std::initializer_list<Label> labels, T value) {
    sample(name, {}, labels, value);
  }
  // The same with the labels in two parts: `shared`, a set several families carry alike (so that
  // a rule can match one series against another's), then the sample's `own`.
  template <typename T>
  requires std::integral<T> || std::floating_point<T>
  void sample(std::string_view name, std::span<const Label> shared,
              std::initializer_list<Label> own, T value) {
    if constexpr (std::floating_point<T>) {
      line(name, shared, own, {}, formatDouble(static_cast<double>(value)));
    } else {
      line(name, shared, own, {}, std::to_string(value));
    }
  }

  // A family of one unlabelled sample: family() then sample() (a node-wide gauge or counter).
  template <typename T>
  requires std::integral<T> || std::floating_point<T>
  void single(std::string_view name, std::string_view type, std::string_view help, T value) {
    family(name, type, help);
    sample(name, {}, value);
  }

  // A histogram's series for one label set: NAME_bucket{...,le="B"} with cumulative counts
  // (`cumulative[i]` observations <= `bounds[i]`; the two spans have one size), then
  // le="+Inf" (= count), NAME_sum and NAME_count. The family line is the caller's.
  void histogram(std::string_view name, std::initializer_list<Label> labels,
                 std::span<const double> bounds, std::span<const uint64_t> cumulative,
                 uint64_t count, double sum);

  const std::string& str() const& { return out_; }
  std::string str() && { return std::move(out_); }

  static std::string formatDouble(double v);

 private:
  // NAME{shared...,own...,extra} VALUE; an empty extra name: no extra label.
  void line(std::string_view name, std::span<const Label> shared, std::initializer_list<Label> own,
            Label extra, const std::string& value);

  std::string out_;
};

}  // namespace rdmanet
