#pragma once
// A ResourceClaim document of a test, decoded into the view the DRA code reads
// (common/kube/resource_claim.h); a document that does not decode fails the test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/kube/resource_claim.h"

namespace rdmanet::dp::testing {

inline kube::ResourceClaim decodedClaim(const nlohmann::json& doc) {
  auto r = kube::decodeResourceClaim(doc);
  EXPECT_TRUE(r.ok()) << r.error().msg;
  return r.ok() ? *r : kube::ResourceClaim{};
}

}  // namespace rdmanet::dp::testing
