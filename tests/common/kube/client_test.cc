#include "common/kube/client.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <thread>

#include "common/kube/api_error.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/stepping_clock.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::kube {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using testing::FakeApiServer;

json node(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!server_.ok()) GTEST_SKIP() << server_.error();
  }
  // A client whose waits are on clock_: recorded, not slept.
  KubeClient client(int attempts = 4, milliseconds timeout = milliseconds(5000)) {
    return KubeClient(
        server_.config(),
        {.request_timeout = timeout, .retry = {.max_attempts = attempts}, .clock = &clock_});
  }
  std::vector<milliseconds> sleeps() const { return clock_.waits(); }
  FakeApiServer server_;
  testing::SteppingClock clock_;
};

TEST_F(ClientTest, CreateGetUpdateDeleteRoundTrip) {
  auto c = client();
  auto created = c.create("/api/v1/nodes", node("n1"));
  ASSERT_TRUE(created.ok()) << created.error().msg;
  EXPECT_FALSE((*created)["metadata"]["uid"].get<std::string>().empty());
  auto got = c.get("/api/v1/nodes/n1");
  ASSERT_TRUE(got.ok()) << got.error().msg;
  (*got)["metadata"]["labels"]["x"] = "y";
  auto updated = c.update("/api/v1/nodes/n1", *got);
  ASSERT_TRUE(updated.ok()) << updated.error().msg;
  EXPECT_EQ((*updated)["metadata"]["labels"]["x"], "y");
  EXPECT_NE((*updated)["metadata"]["resourceVersion"], (*got)["metadata"]["resourceVersion"]);
  ASSERT_TRUE(c.remove("/api/v1/nodes/n1").ok());
  auto gone = c.get("/api/v1/nodes/n1");
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(isNotFound(gone.error()));
  EXPECT_NE(gone.error().msg.find("nodes \"n1\" not found"), std::string::npos) << gone.error().msg;
}

TEST_F(ClientTest, UpdateWithStaleResourceVersionIsConflict) {
  auto c = client();
  auto first = c.create("/api/v1/nodes", node("n1"));
  ASSERT_TRUE(first.ok());
  json a = *first, b = *first;
  a["metadata"]["labels"]["a"] = "1";
  ASSERT_TRUE(c.update("/api/v1/nodes/n1", a).ok());
  b["metadata"]["labels"]["b"] = "1";
  auto r = c.update("/api/v1/nodes/n1", b);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isConflict(r.error()));
  EXPECT_EQ(r.error().code, ErrorCode::kKubeApiFailure);
  EXPECT_NE(r.error().msg.find("Conflict: Operation cannot be fulfilled"), std::string::npos)
      << r.error().msg;
  EXPECT_TRUE(sleeps().empty()) << "409 is the caller's to handle, not retried";
}

TEST_F(ClientTest, CreateOfExistingNameIsConflictAlreadyExists) {
  auto c = client();
  ASSERT_TRUE(c.create("/api/v1/nodes", node("n1")).ok());
  auto r = c.create("/api/v1/nodes", node("n1"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isConflict(r.error()));
  EXPECT_NE(r.error().msg.find("AlreadyExists"), std::string::npos) << r.error().msg;
}

TEST_F(ClientTest, ListFiltersByLabelAndFieldSelector) {
  auto c = client();
  ASSERT_TRUE(c.create("/api/v1/nodes", node("n1", {{"gpu", "yes"}})).ok());
  ASSERT_TRUE(c.create("/api/v1/nodes", node("n2", {{"gpu", "no"}})).ok());
  ASSERT_TRUE(c.create("/api/v1/nodes", node("n3")).ok());
  auto names = [](const json& list) {
    std::vector<std::string> out;
    for (const auto& i : list["items"]) out.push_back(i["metadata"]["name"]);
    return out;
  };
  auto all = c.list("/api/v1/nodes");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(names(*all), (std::vector<std::string>{"n1", "n2", "n3"}));
  auto gpu = c.list("/api/v1/nodes", {.label_selector = "gpu=yes"});
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(names(*gpu), (std::vector<std::string>{"n1"}));
  auto labelled = c.list("/api/v1/nodes", {.label_selector = "gpu,gpu!=yes"});
  ASSERT_TRUE(labelled.ok());
  EXPECT_EQ(names(*labelled), (std::vector<std::string>{"n2"}));
  auto by_name = c.list("/api/v1/nodes", {.field_selector = "metadata.name=n3"});
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(names(*by_name), (std::vector<std::string>{"n3"}));
}

TEST_F(ClientTest, AListIsReadInPagesFollowingTheContinueToken) {
  auto c = client();
  for (const char* n : {"n1", "n2", "n3"}) ASSERT_TRUE(c.create("/api/v1/nodes", node(n)).ok());
  auto first = c.list("/api/v1/nodes", {.limit = 2});
  ASSERT_TRUE(first.ok()) << first.error().msg;
  ASSERT_EQ((*first)["items"].size(), 2u);
  const std::string token = (*first)["metadata"].value("continue", "");
  ASSERT_FALSE(token.empty());
  auto rest = c.list("/api/v1/nodes", {.limit = 2, .continue_token = token});
  ASSERT_TRUE(rest.ok()) << rest.error().msg;
  ASSERT_EQ((*rest)["items"].size(), 1u);
  EXPECT_EQ((*rest)["items"][0]["metadata"]["name"], "n3");
  EXPECT_FALSE((*rest)["metadata"].contains("continue"));
}

// A server that answers more than the cap (a hostile one, or a list grown past all reason) costs
// the daemon at most the cap in memory, and a clear error; asking again would get the same.
TEST_F(ClientTest, AnAnswerOverTheSizeCapIsAnErrorNamingTheCapAndIsNotRetried) {
  KubeClient c(server_.config(),
               {.retry = {.max_attempts = 4}, .clock = &clock_, .max_response_bytes = 4096});
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(
        c.create("/api/v1/nodes", node(fmt::format("n{}", i), {{"pad", std::string(60, 'x')}}))
            .ok());
  }
  ASSERT_TRUE(c.get("/api/v1/nodes/n0").ok()) << "one small object is under the cap";
  auto all = c.list("/api/v1/nodes");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().code, ErrorCode::kKubeApiFailure);
  EXPECT_NE(all.error().msg.find("larger than the client's cap of 4096 bytes"), std::string::npos)
      << all.error().msg;
  EXPECT_TRUE(sleeps().empty()) << "not retried";
  auto defaults = KubeClient(server_.config());
  auto fits = defaults.list("/api/v1/nodes");
  ASSERT_TRUE(fits.ok()) << fits.error().msg;
  EXPECT_GT(fits->dump().size(), 4096u);
}

TEST_F(ClientTest, UnsupportedFieldSelectorIsBadRequest) {
  auto c = client();
  auto r = c.list("/api/v1/nodes", {.field_selector = "spec.unschedulable=true"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 400);
  EXPECT_NE(r.error().msg.find("field label not supported"), std::string::npos);
}

TEST_F(ClientTest, InvalidResourceSliceIsUnprocessableWithTheCause) {
  auto c = client();
  json attrs = json::object();
  attrs["a"] = {{"string", std::string(65, 'x')}};
  json slice = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceSlice"},
                {"metadata", {{"name", "s1"}}},
                {"spec",
                 {{"driver", "rdma.rdmanet.io"},
                  {"nodeName", "n1"},
                  {"pool", {{"name", "n1"}, {"generation", 1}, {"resourceSliceCount", 1}}},
                  {"devices", {{{"name", "d0"}, {"attributes", attrs}}}}}}};
  auto r = c.create("/apis/resource.k8s.io/v1/resourceslices", slice);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isInvalid(r.error()));
  EXPECT_NE(r.error().msg.find("spec.devices[0].attributes[a].string: Too long"), std::string::npos)
      << r.error().msg;
}

// Each status the callers must tell apart maps to exactly one predicate.
TEST_F(ClientTest, ErrorStatusesAreDistinguishable) {
  struct Case {
    int status;
    bool (*pred)(const Error&);
  };
  const std::vector<Case> cases = {
      {401, isUnauthorized}, {403, isForbidden},       {404, isNotFound},   {409, isConflict},
      {422, isInvalid},      {429, isTooManyRequests}, {503, isServerError}};
  auto c = client(/*attempts=*/1);
  for (const auto& k : cases) {
    server_.fail("GET", "/api/v1/nodes", k.status);
    auto r = c.get("/api/v1/nodes/x");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().http_status, k.status);
    for (const auto& other : cases) {
      EXPECT_EQ(other.pred(r.error()), other.status == k.status)
          << "status " << k.status << " vs predicate for " << other.status;
    }
    EXPECT_FALSE(isNoAnswer(r.error()));
    EXPECT_FALSE(hint(r.error()).empty()) << k.status;
    EXPECT_NE(r.error().msg.find("injected " + std::to_string(k.status)), std::string::npos)
        << "the Status message is carried: " << r.error().msg;
  }
}

// A body shaped like a Status whose fields have other types (a proxy, a fuzzer's find: "kind"
// a number threw json's type_error out of statusError) is kept as the body, without a reason.
TEST(StatusErrorTest, FieldsOfAnotherTypeAreIgnoredNotThrown) {
  for (const char* body :
       {R"({"kind":5,"reason":"Conflict"})", R"({"kind":"Status","reason":7,"message":["x"]})",
        R"({"kind":null})", "[1,2]"}) {
    const Error e = statusError("PUT", "/x", 409, body);
    EXPECT_EQ(e.http_status, 409) << body;
    EXPECT_EQ(e.msg, "PUT /x: HTTP 409") << body;
    EXPECT_EQ(e.details, body);
  }
}

// A pod's /metrics through the API server's proxy: Prometheus text, not JSON, with the same
// retries as every verb (a 503 while nothing listens yet is tried again).
TEST_F(ClientTest, GetTextReadsAPodsAnswerThroughTheProxyAndRetries) {
  auto c = client(/*attempts=*/2);
  const json pod = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata", {{"name", "d1"}}},
                    {"spec", {{"containers", {{{"name", "main"}, {"image", "x"}}}}}}};
  ASSERT_TRUE(c.create("/api/v1/namespaces/ns/pods", pod).ok());
  const std::string path = "/api/v1/namespaces/ns/pods/d1:9109/proxy/metrics";
  auto none = c.getText(path);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(isServerError(none.error()));
  EXPECT_NE(none.error().msg.find("connection refused"), std::string::npos) << none.error().msg;
  EXPECT_EQ(sleeps().size(), 1u);
  server_.setProxyAnswer("ns", "d1", "9109", "/metrics", "# HELP x y\nx 1\n");
  auto text = c.getText(path);
  ASSERT_TRUE(text.ok()) << text.error().msg;
  EXPECT_EQ(*text, "# HELP x y\nx 1\n");
  auto missing = c.getText("/api/v1/namespaces/ns/pods/nope:9109/proxy/metrics");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(isNotFound(missing.error()));
}

TEST_F(ClientTest, ServerErrorsAreRetriedWithDoublingBackoff) {
  auto c = client(/*attempts=*/4);
  ASSERT_TRUE(c.create("/api/v1/nodes", node("n1")).ok());
  server_.fail("GET", "/api/v1/nodes/n1", 500, 2);
  server_.fail("GET", "/api/v1/nodes/n1", 503, 1);
  auto r = c.get("/api/v1/nodes/n1");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(sleeps(),
            (std::vector<milliseconds>{milliseconds(200), milliseconds(400), milliseconds(800)}));
}

TEST_F(ClientTest, RetriesStopAtMaxAttempts) {
  auto c = client(/*attempts=*/3);
  server_.fail("GET", "/api/v1/nodes", 500, 10);
  auto r = c.get("/api/v1/nodes/n1");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isServerError(r.error()));
  EXPECT_EQ(sleeps().size(), 2u);
}

TEST_F(ClientTest, CreateIsNotRetriedAfterAServerError) {
  auto c = client();
  server_.fail("POST", "/api/v1/nodes", 500);
  auto r = c.create("/api/v1/nodes", node("n1"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isServerError(r.error()));
  EXPECT_TRUE(sleeps().empty()) << "a create that failed on the server may have happened";
  EXPECT_TRUE(c.create("/api/v1/nodes", node("n1")).ok());
}

TEST_F(ClientTest, CreateIsRetriedAfterTooManyRequests) {
  auto c = client();
  server_.fail("POST", "/api/v1/nodes", 429);
  auto r = c.create("/api/v1/nodes", node("n1"));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(sleeps().size(), 1u);
}

TEST_F(ClientTest, TimeOutIsNoAnswerAndRetried) {
  auto c = client(/*attempts=*/2, milliseconds(300));
  ASSERT_TRUE(c.create("/api/v1/nodes", node("n1")).ok());
  server_.hang("GET", "/api/v1/nodes/n1", 5000, 1);
  auto r = c.get("/api/v1/nodes/n1");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(sleeps().size(), 1u);

  server_.hang("GET", "/api/v1/nodes/n1", 5000, 2);
  auto timed_out = c.get("/api/v1/nodes/n1");
  ASSERT_FALSE(timed_out.ok());
  EXPECT_TRUE(isNoAnswer(timed_out.error())) << timed_out.error().msg;
  EXPECT_NE(timed_out.error().msg.find("after 2 attempts"), std::string::npos);
}

TEST_F(ClientTest, RefusedConnectionIsNoAnswer) {
  KubeConfig cfg;
  {
    FakeApiServer gone;  // a port that was just free, now closed again
    ASSERT_TRUE(gone.ok());
    cfg = gone.config();
  }
  KubeClient c(cfg, {.retry = {.max_attempts = 3}, .clock = &clock_});
  auto r = c.get("/api/v1/nodes");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isNoAnswer(r.error()));
  EXPECT_EQ(r.error().http_status, 0);
  EXPECT_EQ(hint(r.error()), "the API server did not answer (down, unreachable or slow)");
  EXPECT_EQ(sleeps().size(), 2u);
}

TEST_F(ClientTest, FollowsARotatedTokenFile) {
  sim::TempDir dir;
  const auto token = dir.path() / "token";
  auto write = [&](const std::string& t) {
    const auto tmp = dir.path() / "token.tmp";
    std::ofstream(tmp) << t;
    std::filesystem::rename(tmp, token);  // how kubelet swaps it: atomically
  };
  write("first");
  server_.setTokens({"first"});
  KubeConfig cfg = server_.config();
  cfg.token_file = token.string();
  KubeClient c(cfg, {.retry = {.max_attempts = 1}});
  ASSERT_TRUE(c.list("/api/v1/nodes").ok());

  server_.setTokens({"second"});
  write("second");
  auto r = c.list("/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.error().msg;

  server_.setTokens({"third"});
  auto denied = c.list("/api/v1/nodes");
  ASSERT_FALSE(denied.ok());
  EXPECT_TRUE(isUnauthorized(denied.error()));
}

TEST_F(ClientTest, SendsAFixedToken) {
  server_.setTokens({"s3cret"});
  KubeConfig cfg = server_.config();
  cfg.token = "s3cret";
  KubeClient c(cfg, {.retry = {.max_attempts = 1}});
  EXPECT_TRUE(c.list("/api/v1/nodes").ok());
  KubeClient anonymous(server_.config(), {.retry = {.max_attempts = 1}});
  auto r = anonymous.list("/api/v1/nodes");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isUnauthorized(r.error()));
}

TEST_F(ClientTest, RelativePathIsRefusedWithoutARequest) {
  auto c = client();
  auto r = c.get("api/v1/nodes");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInternal);
  EXPECT_EQ(server_.stats()["requests"].value("GET", 0), 0);
}

// Issue 23: calls used to be serialised across the whole request, retries and backoff
// included, so one stalled GET held up every other call of the client.
TEST_F(ClientTest, AStalledRequestDoesNotHoldUpAnotherOnTheSameClient) {
  KubeClient c(server_.config(), {.request_timeout = milliseconds(5000), .retry = {}});
  ASSERT_TRUE(c.create("/api/v1/nodes", node("fast")).ok());
  server_.hang("GET", "/api/v1/nodes/slow", 5000, 4);
  auto slow = std::async(std::launch::async, [&] { return c.get("/api/v1/nodes/slow"); });
  // Wait until the stalled GET reached the server.
  ASSERT_TRUE(rdmanet::testing::eventually(
      [&] { return server_.stats()["requests"].value("GET", 0) >= 1; }, std::chrono::seconds(5)));
  const auto t0 = std::chrono::steady_clock::now();
  auto fast = c.get("/api/v1/nodes/fast");
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(fast.ok()) << fast.error().msg;
  // Half the stall: not held up by it, with room for a loaded machine.
  EXPECT_LT(took, milliseconds(2500));
  c.cancel();  // no need to wait out the stalled one
  EXPECT_FALSE(slow.get().ok());
}

TEST_F(ClientTest, ACallEndsByTheCallersDeadline) {
  KubeClient c(server_.config(), {.request_timeout = milliseconds(5000), .retry = {}});
  server_.hang("GET", "/api/v1/nodes/n1", 5000, 4);
  const SteadyClock real;  // the client's own clock when it is given none
  const auto t0 = std::chrono::steady_clock::now();
  auto r = c.get("/api/v1/nodes/n1", Deadline::in(milliseconds(300), real));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isNoAnswer(r.error())) << r.error().msg;
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, milliseconds(2500));  // ended by the deadline, not by the 5 s stall
}

TEST_F(ClientTest, NoRetryStartsWhenItsBackoffWouldEndPastTheDeadline) {
  auto c = client(/*attempts=*/4);
  server_.fail("GET", "/api/v1/nodes/n1", 503, 4);
  auto r = c.get("/api/v1/nodes/n1", Deadline::in(milliseconds(100), clock_));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isServerError(r.error()));
  EXPECT_TRUE(sleeps().empty()) << "the first backoff (200 ms) ends past the deadline";
}

// Issue 23, item 9: the backoff used to sleep on real time, whatever clock the daemon ran on.
// Here the retry waits on the injected clock: it ends when the test moves the clock past it, not
// a moment before, and real time alone never ends it.
TEST_F(ClientTest, ABackoffWaitsOnTheInjectedClockUntilItMovesPastIt) {
  testing::FakeClock fake;
  KubeClient c(server_.config(), {.retry = {.max_attempts = 2}, .clock = &fake});
  ASSERT_TRUE(c.create("/api/v1/nodes", node("n1")).ok());
  server_.fail("GET", "/api/v1/nodes/n1", 503, 1);
  auto call = std::async(std::launch::async, [&] { return c.get("/api/v1/nodes/n1"); });
  ASSERT_TRUE(fake.waitIdle()) << "the 503's backoff is not waiting on the injected clock";
  fake.advance(milliseconds(199));
  ASSERT_TRUE(fake.waitIdle());
  EXPECT_EQ(call.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(server_.stats()["requests"].value("GET", 0), 1);
  fake.advance(milliseconds(1));
  ASSERT_EQ(call.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto r = call.get();
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(server_.stats()["requests"].value("GET", 0), 2);
}

// The caller's deadline is on the same clock: retries stop when the next backoff would end past
// it, counted in the clock's time that the backoffs have used.
TEST_F(ClientTest, RetriesStopWhereTheNextBackoffWouldEndPastTheDeadlineOnTheClock) {
  auto c = client(/*attempts=*/6);
  server_.fail("GET", "/api/v1/nodes/n1", 503, 6);
  const Deadline d = Deadline::in(milliseconds(1000), clock_);
  auto r = c.get("/api/v1/nodes/n1", d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(isServerError(r.error()));
  // 200 + 400 ms waited; the next (800 ms) would end 400 ms past the deadline.
  EXPECT_EQ(sleeps(), (std::vector<milliseconds>{milliseconds(200), milliseconds(400)}));
  EXPECT_EQ(d.left(milliseconds(1000), clock_), milliseconds(400));
}

// Shutdown: cancel() ends a request in flight and a backoff wait, without waiting them out.
TEST_F(ClientTest, CancelEndsACallInFlightAndItsRetriesWithinASecond) {
  KubeClient c(server_.config(), {.request_timeout = milliseconds(20000),
                                  .retry = {.max_attempts = 4,
                                            .initial_backoff = milliseconds(10000),
                                            .max_backoff = milliseconds(10000)}});
  server_.hang("GET", "/api/v1/nodes/n1", 20000, 1);
  server_.fail("GET", "/api/v1/nodes/n2", 503, 4);
  auto stalled = std::async(std::launch::async, [&] { return c.get("/api/v1/nodes/n1"); });
  auto backing_off = std::async(std::launch::async, [&] { return c.get("/api/v1/nodes/n2"); });
  ASSERT_TRUE(rdmanet::testing::eventually(
      [&] { return server_.stats()["requests"].value("GET", 0) >= 2; }, std::chrono::seconds(5)));
  const auto t0 = std::chrono::steady_clock::now();
  c.cancel();
  auto a = stalled.get();
  auto b = backing_off.get();
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  EXPECT_LT(took, milliseconds(2500));  // half the 5 s stall: ended by the cancel
  EXPECT_NE(a.error().msg.find("cancelled"), std::string::npos) << a.error().msg;
  auto later = c.get("/api/v1/nodes/n3");
  ASSERT_FALSE(later.ok());
  EXPECT_TRUE(isNoAnswer(later.error()));
}

}  // namespace
}  // namespace rdmanet::kube
