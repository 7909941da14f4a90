// The doctor's sysfs cost on 128- and 1016-VF nodes of every RDMA shape
// (tests/simnode/scale_shapes.h): it looks at PFs and GPUs, so it stays linear (in fact flat)
// however many VFs and RDMA devices the node has.
#include <gtest/gtest.h>

#include <algorithm>

#include "deviceplugin/doctor/doctor.h"
#include "tests/fakes/scan_cost.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet::doctor {
namespace {

using sim::ScaleShape;

class DoctorCostTest : public ::testing::TestWithParam<ScaleShape> {};

TEST_P(DoctorCostTest, ARunIsLinear) {
  auto run = [](const Sysfs& s) {
    const DoctorReport r = runDoctor({.sysfs = s});
    EXPECT_FALSE(r.results.empty());
  };
  expectLinearOnShape(GetParam(), "doctor", run);
}

INSTANTIATE_TEST_SUITE_P(Shapes, DoctorCostTest, ::testing::ValuesIn(sim::kScaleShapes),
                         [](const auto& info) { return sim::shapeIdentifier(info.param); });

}  // namespace
}  // namespace rdmanet::doctor
