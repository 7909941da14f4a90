#include "common/base/result.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

namespace rdmanet {
namespace {

Result<int> half(int v) {
  if (v % 2) return makeError(ErrorCode::kInvalidConfig, "odd");
  return v / 2;
}

Result<int> quarter(int v) {
  RDMANET_ASSIGN_OR_RETURN(int h, half(v));
  RDMANET_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

Status checkEven(int v) {
  RDMANET_RETURN_IF_ERROR(half(v));
  return okStatus();
}

TEST(ResultTest, PropagatesTheFirstErrorUnchanged) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(r.error().msg, "odd");
  EXPECT_TRUE(checkEven(4).ok());
  EXPECT_EQ(checkEven(5).error().code, ErrorCode::kInvalidConfig);
}

TEST(ResultTest, ContextPrefixesTheMessageAndKeepsTheCode) {
  Error e = errnoError(ErrorCode::kNetlinkFailure, -EOPNOTSUPP, "set vf 0 link state");
  EXPECT_EQ(e.sys_errno, EOPNOTSUPP);
  EXPECT_EQ(e.msg, "set vf 0 link state: Operation not supported");
  Error c = e.context("sriov");
  EXPECT_EQ(c.msg, "sriov: set vf 0 link state: Operation not supported");
  EXPECT_EQ(c.code, ErrorCode::kNetlinkFailure);
  EXPECT_EQ(c.sys_errno, EOPNOTSUPP);
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
  EXPECT_EQ(half(3).valueOr(-1), -1);
}

}  // namespace
}  // namespace rdmanet
