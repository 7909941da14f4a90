#pragma once
// The API server's ResourceClaims in memory, for tests that drive a ClaimPreparer without one:
// each read takes `latency` on the test's clock, as a GET that long would; a name it does not
// hold is a 404. And the claim such tests mostly hold.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "deviceplugin/dra/claim_reader.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp::testing {

class InMemoryClaims final : public ClaimReader {
 public:
  explicit InMemoryClaims(rdmanet::testing::FakeClock& clock) : clock_(clock) {}
  Result<nlohmann::json> getClaim(const std::string&, const std::string& name,
                                  const Deadline&) override {
    clock_.advance(latency);
    auto it = claims.find(name);
    if (it == claims.end()) {
      Error e = makeError(ErrorCode::kKubeApiFailure,
                          "GET resourceclaims/" + name + ": HTTP 404 NotFound: not found");
      e.http_status = 404;
      return e;
    }
    return it->second;
  }
  Result<std::vector<nlohmann::json>> listClaims(const Deadline&) override {
    return std::vector<nlohmann::json>{};
  }
  void cancel() override {}

  std::map<std::string, nlohmann::json> claims;
  Clock::duration latency{};

 private:
  rdmanet::testing::FakeClock& clock_;
};

// A ResourceClaim in namespace "team" allocated one device of rdma.rdmanet.io in pool "node-a"
// for request "nic", reserved for `reserved_for`.
inline nlohmann::json oneNicClaim(const std::string& name, const std::string& uid,
                                  const std::string& device,
                                  const nlohmann::json& reserved_for = nlohmann::json::array()) {
  const nlohmann::json result = {
      {"request", "nic"}, {"driver", "rdma.rdmanet.io"}, {"pool", "node-a"}, {"device", device}};
  return {{"metadata", {{"name", name}, {"namespace", "team"}, {"uid", uid}}},
          {"status",
           {{"allocation", {{"devices", {{"results", nlohmann::json::array({result})}}}}},
            {"reservedFor", reserved_for}}}};
}

}  // namespace rdmanet::dp::testing
