// Slices that converge (issue 23, item 6): whatever this driver publishes for this node becomes
// exactly the current pool, whoever else wrote there (a previous run's slices, under another
// pool name), and within 2 s of the API server answering normally again, through conflicts and
// server errors, with no pool left at mixed generations. Times are on the FakeClock the worker
// backs off on (deterministic); the real time of the converging publish is logged beside them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "tests/deviceplugin/dra/apiserver/slice_converge_fixture.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// Logs how long the slices took to be exact, on the worker's clock and in real time.
void report(const char* what, milliseconds on_clock, std::chrono::steady_clock::time_point t0) {
  const auto real = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
  std::printf("%s: slices exact after %lld ms on the worker's clock (%lld ms real)\n", what,
              static_cast<long long>(on_clock.count()), static_cast<long long>(real.count()));
}

TEST_F(SliceConvergeTest, AStaleSliceOfAnotherRunIsDeletedByTheFirstPublish) {
  writeForeignSlice("node-c-previous-run", 3, 7);
  auto snap = snapshot(70);
  hand(snap);
  EXPECT_EQ(inexact(*snap), "");
  EXPECT_EQ(generations(), (std::set<int64_t>{1})) << "another pool's generation is not ours";
}

TEST_F(SliceConvergeTest, AStaleSliceWrittenAfterThePublishIsDeletedByTheNextResync) {
  auto snap = snapshot(70);
  hand(snap);
  ASSERT_EQ(inexact(*snap), "");
  // A previous run still shutting down (a rolling update) writes after our publish; the
  // inventory does not change again.
  writeForeignSlice("node-c-previous-run", 3, 4);
  ASSERT_NE(inexact(*snap), "");
  const auto t0 = std::chrono::steady_clock::now();
  const auto took = stepUntilExact(*snap);
  ASSERT_TRUE(took) << "still " << inexact(*snap) << " after 60 s";
  EXPECT_LE(*took, 32s) << "the worker's 30 s resync, and 2 s";
  report("a foreign slice written after the publish", *took, t0);
}

TEST_F(SliceConvergeTest, OneOfOurSlicesDeletedBySomeoneElseIsWrittenAgainByTheNextResync) {
  auto snap = snapshot(70);
  hand(snap);
  ASSERT_EQ(inexact(*snap), "");
  const std::string name = slices()[0]["metadata"]["name"];
  ASSERT_TRUE(client_->remove(std::string(kSlices) + "/" + name).ok());
  const auto took = stepUntilExact(*snap);
  ASSERT_TRUE(took) << "still " << inexact(*snap) << " after 60 s";
  EXPECT_LE(*took, 32s) << "the worker's 30 s resync, and 2 s";
}

TEST_F(SliceConvergeTest, AVfCountChangeThroughAConflictAndAServerErrorConverges) {
  hand(snapshot(70));  // two slices: 64 + 6
  ASSERT_EQ(slices().size(), 2u);
  // 70 -> 60 VFs: the first slice is updated to 60 devices, the second deleted. Another writer
  // touched the first between our list and our update (409), and the delete meets a 500.
  api_.fail("PUT", kSlices, 409, 1, kWorkerAgent);
  api_.fail("DELETE", kSlices, 500, 1, kWorkerAgent);
  auto snap = snapshot(60);
  const auto t0 = std::chrono::steady_clock::now();
  hand(snap);
  const auto took = stepUntilExact(*snap);
  ASSERT_TRUE(took) << "still " << inexact(*snap) << " after 60 s";
  EXPECT_LE(*took, 2s);
  EXPECT_EQ(generations(), (std::set<int64_t>{2}));
  report("70 -> 60 VFs through a 409 and a 500", *took, t0);
}

// The API server fails every slice request for `outage` of the worker's clock while the VF count
// goes from 70 to 60; then it answers normally. Returns how long after that the slices were
// exact (on the worker's clock), and whether the pool was seen at mixed generations meanwhile.
struct OutageResult {
  std::optional<milliseconds> took;
  bool mixed_seen = false;
};

class SliceOutageTest : public SliceConvergeTest {
 protected:
  OutageResult changeThroughOutage(const std::string& method, milliseconds outage) {
    OutageResult out;
    hand(snapshot(70));
    EXPECT_EQ(slices().size(), 2u);
    api_.fail(method, kSlices, 500, 100000, kWorkerAgent);
    auto snap = snapshot(60);
    hand(snap);
    for (milliseconds t{0}; t < outage; t += 1s) {
      if (!advance(1s)) return out;
      out.mixed_seen = out.mixed_seen || generations().size() > 1;
      EXPECT_NE(inexact(*snap), "") << "exact while the server fails";
    }
    api_.clearFaults();
    const auto t0 = std::chrono::steady_clock::now();
    out.took = stepUntilExact(*snap);
    const std::string what =
        "70 -> 60 VFs, " + (method.empty() ? "every" : method) + " request failing";
    if (out.took) report(what.c_str(), *out.took, t0);
    return out;
  }
};

TEST_F(SliceOutageTest, SlicesAreExactWithinTwoSecondsOfTheApiServerAnsweringAgain) {
  // Every request on slices (list, update, delete) fails for 20 s.
  const auto r = changeThroughOutage("", 20s);
  ASSERT_TRUE(r.took) << "not exact 60 s after the server answered again";
  EXPECT_LE(*r.took, 2s);
}

TEST_F(SliceOutageTest, APoolLeftAtMixedGenerationsIsWholeWithinTwoSecondsOfTheServerAnswering) {
  // Only deletes fail: the first slice is at generation 2, the one holding the removed VFs
  // stays at 1 (and still lists them) until the delete goes through.
  const auto r = changeThroughOutage("DELETE", 20s);
  EXPECT_TRUE(r.mixed_seen);
  ASSERT_TRUE(r.took) << "not exact 60 s after the server answered again";
  EXPECT_LE(*r.took, 2s);
  EXPECT_EQ(generations().size(), 1u);
}

}  // namespace
}  // namespace rdmanet::dp
