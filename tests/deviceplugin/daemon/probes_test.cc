// /readyz carries the front's note (deviceplugin/daemon/probes.h): a probe's output says what the
// DRA front recovered at start, whether or not the front is registered yet.
#include "deviceplugin/daemon/probes.h"

#include <gtest/gtest.h>

namespace rdmanet::dp {
namespace {

TEST(ProbesTest, ReadyzCarriesTheFrontsNoteWhenThereIsOne) {
  Metrics metrics;
  const std::string note =
      "prepared-claims checkpoint /x was unusable (...); restored from the backup";
  auto ready = probeResponse("/readyz", {.metrics = metrics, .ready = true, .ready_note = note});
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ready\n" + note + "\n");
  auto not_yet = probeResponse("/readyz", {.metrics = metrics, .ready = false, .ready_note = note});
  EXPECT_EQ(not_yet.status, 503);
  EXPECT_EQ(not_yet.body, "not registered with kubelet\n" + note + "\n");
  EXPECT_EQ(probeResponse("/readyz", {.metrics = metrics, .ready = true}).body, "ready\n");
}

}  // namespace
}  // namespace rdmanet::dp
