// The typed view of the API server's metav1.Status (common/kube/api_status.h): a Status decodes
// to its fields; a body that is no Status, or a field of the wrong type or value, is error 7
// naming the key.
#include "common/kube/api_status.h"

#include <gtest/gtest.h>

namespace rdmanet::kube {
namespace {

using nlohmann::json;

TEST(ApiStatusViewTest, AStatusDecodesToItsFields) {
  auto s = decodeApiStatus(json::parse(R"({"kind": "Status", "apiVersion": "v1", "metadata": {},
      "status": "Failure", "message": "the object has been modified", "reason": "Conflict",
      "details": {"name": "x"}, "code": 409})"));
  ASSERT_TRUE(s.ok()) << s.error().msg;
  EXPECT_EQ(s->status, StatusOutcome::kFailure);
  EXPECT_EQ(s->code, 409);
  EXPECT_EQ(s->reason, "Conflict");
  EXPECT_EQ(s->message, "the object has been modified");
  auto bare = decodeApiStatus(json{{"kind", "Status"}, {"status", "Success"}});
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->status, StatusOutcome::kSuccess);
  EXPECT_EQ(bare->code, 0);
  EXPECT_EQ(bare->reason, "");
}

TEST(ApiStatusViewTest, EachWrongTypeOrValueIsError7NamingTheKey) {
  const std::pair<json, std::string> cases[] = {
      {json::array(), "\"Status\" must be an object"},
      {json{{"kind", "Pod"}}, "\"kind\" is \"Pod\", not \"Status\""},
      {json::object(), "\"kind\" is absent, not \"Status\""},
      {json{{"kind", 1}}, "\"kind\" must be a string"},
      {json{{"kind", "Status"}, {"status", "Maybe"}},
       "\"status\" is \"Maybe\", not one of \"Success\", \"Failure\""},
      {json{{"kind", "Status"}, {"status", 1}}, "\"status\" must be a string"},
      {json{{"kind", "Status"}, {"code", "409"}}, "\"code\" must be an integer"},
      {json{{"kind", "Status"}, {"code", -1}}, "\"code\" is -1, out of range 0..2147483647"},
      {json{{"kind", "Status"}, {"reason", json::object()}}, "\"reason\" must be a string"},
      {json{{"kind", "Status"}, {"message", false}}, "\"message\" must be a string"},
  };
  for (const auto& [doc, msg] : cases) {
    auto s = decodeApiStatus(doc);
    ASSERT_FALSE(s.ok()) << doc.dump();
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidConfig) << doc.dump();
    EXPECT_EQ(s.error().msg, msg) << doc.dump();
  }
}

}  // namespace
}  // namespace rdmanet::kube
