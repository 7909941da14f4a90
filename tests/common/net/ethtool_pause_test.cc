// EthtoolPauseReader against the real kernel in a throw-away netns: veth has no pause
// settings (EOPNOTSUPP, what the doctor reports as UNKNOWN), an unknown name is ENODEV. The
// positive read needs a driver with pause (igb): tests/vm/doctor_triad.sh runs it there.
#include <gtest/gtest.h>

#include <cerrno>

#include "common/net/pause.h"
#include "tests/common/net/libnl_fixture.h"

namespace rdmanet {
namespace {

using EthtoolPauseTest = testing::LibnlNetnsTest;

TEST_F(EthtoolPauseTest, VethHasNoPauseSettings) {
  auto r = EthtoolPauseReader::open();
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto p = (*r)->pause("va");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().sys_errno, EOPNOTSUPP) << p.error().msg;
}

TEST_F(EthtoolPauseTest, UnknownPortIsEnodev) {
  auto r = EthtoolPauseReader::open();
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto p = (*r)->pause("nosuchport0");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().sys_errno, ENODEV);
  EXPECT_EQ(p.error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(EthtoolPauseTest, OneReaderAnswersRepeatedly) {
  auto r = EthtoolPauseReader::open();
  ASSERT_TRUE(r.ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*r)->pause("vb").error().sys_errno, EOPNOTSUPP);
  }
}

}  // namespace
}  // namespace rdmanet
