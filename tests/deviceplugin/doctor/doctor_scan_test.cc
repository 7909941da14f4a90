// The doctor scans without VFs (doctor::kScan): that must change nothing it reports.
#include <gtest/gtest.h>

#include "deviceplugin/doctor/doctor.h"
#include "deviceplugin/doctor/render.h"
#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using testing::DoctorNode;

TEST(DoctorScan, LeavingVfsOutChangesNoCheckAndNoRendering) {
  DoctorNode node;
  node.tree().setNetdevUp("ens2f1", false);  // one FAIL, so results are not all alike
  const Sysfs sysfs = node.sysfs();
  const NodeInventory full = scanNode(sysfs);
  const NodeInventory pfs = scanNode(sysfs, kScan);
  ASSERT_LT(pfs.nics.size(), full.nics.size());
  for (const NicFunction& n : pfs.nics) EXPECT_FALSE(n.pci.isVf()) << n.pci.address.str();

  const DoctorInputs in{.sysfs = sysfs, .netlink = &node.netlink(), .now_unix = 1000};
  const DoctorReport with_vfs = runDoctor(in, full);
  const DoctorReport without = runDoctor(in);
  ASSERT_FALSE(with_vfs.results.empty());
  EXPECT_EQ(renderJson(without), renderJson(with_vfs));
  EXPECT_EQ(renderTable(without), renderTable(with_vfs));
  EXPECT_EQ(renderDot(pfs, &without), renderDot(full, &with_vfs));
}

}  // namespace
}  // namespace rdmanet::doctor
