// The Prometheus text writer: family headers, label escaping, number formats, histograms.
#include "common/base/prometheus_text.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>

namespace rdmanet {
namespace {

TEST(PrometheusTextTest, WritesAFamilyAndItsSamples) {
  PrometheusText out;
  out.family("m_total", "counter", "Things.\nSecond line \\ backslash.");
  out.sample("m_total", {{"a", "x"}, {"b", "y"}}, uint64_t{18446744073709551615ull});
  out.sample("m_total", {}, -3);
  EXPECT_EQ(out.str(),
            "# HELP m_total Things.\\nSecond line \\\\ backslash.\n"
            "# TYPE m_total counter\n"
            "m_total{a=\"x\",b=\"y\"} 18446744073709551615\n"
            "m_total -3\n");
}

TEST(PrometheusTextTest, EscapesLabelValues) {
  PrometheusText out;
  out.sample("g", {{"v", "a\"b\\c\nd"}}, 1);
  EXPECT_EQ(out.str(), "g{v=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(PrometheusTextTest, FormatsFloatingValues) {
  EXPECT_EQ(PrometheusText::formatDouble(0.00025), "0.00025");
  EXPECT_EQ(PrometheusText::formatDouble(2.5), "2.5");
  EXPECT_EQ(PrometheusText::formatDouble(1e-7), "1e-07");
  EXPECT_EQ(PrometheusText::formatDouble(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(PrometheusText::formatDouble(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(PrometheusText::formatDouble(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(PrometheusTextTest, HistogramEndsWithInfSumAndCount) {
  PrometheusText out;
  const std::array<double, 2> bounds = {0.001, 0.5};
  const std::array<uint64_t, 2> cumulative = {1, 2};
  out.histogram("h", {{"r", "p"}}, bounds, cumulative, 3, 1.25);
  EXPECT_EQ(out.str(),
            "h_bucket{r=\"p\",le=\"0.001\"} 1\n"
            "h_bucket{r=\"p\",le=\"0.5\"} 2\n"
            "h_bucket{r=\"p\",le=\"+Inf\"} 3\n"
            "h_sum{r=\"p\"} 1.25\n"
            "h_count{r=\"p\"} 3\n");
}

}  // namespace
}  // namespace rdmanet
