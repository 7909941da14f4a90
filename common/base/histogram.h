#pragma once
// Histogram: one Prometheus histogram series (cumulative buckets, sum, count) of a duration the
// daemon measures, written with PrometheusText::histogram. Every latency on /metrics (Allocate,
// DRA prepare and unprepare) is one of these, each with the bucket bounds that fit its range.
// Not thread-safe: its owner locks (deviceplugin/metrics.h).

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "common/base/prometheus_text.h"

namespace rdmanet {

class Histogram {
 public:
  // `bounds`: the buckets' upper bounds, ascending, without +Inf; must outlive the histogram (a
  // caller's constant).
  explicit Histogram(std::span<const double> bounds)
      : bounds_(bounds), cumulative_(bounds.size(), 0) {}

  void observe(double value) {
    for (size_t i = 0; i < bounds_.size(); ++i) {
      if (value <= bounds_[i]) ++cumulative_[i];
    }
    ++count_;
    sum_ += value;
  }
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

  // NAME_bucket{labels...,le=...}, NAME_sum, NAME_count; the family line is the caller's.
  void write(PrometheusText& out, std::string_view name,
             std::initializer_list<PrometheusText::Label> labels) const {
    out.histogram(name, labels, bounds_, cumulative_, count_, sum_);
  }

 private:
  std::span<const double> bounds_;
  std::vector<uint64_t> cumulative_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace rdmanet
