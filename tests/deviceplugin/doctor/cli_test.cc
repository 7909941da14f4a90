// The command line: flag parsing (table-driven), exit codes, and the --baseline life cycle,
// driven in-process through runCli with the fake kernel.
#include "deviceplugin/doctor/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/cli/command_line.h"
#include "deviceplugin/doctor/counters.h"
#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

TEST(DoctorCliParse, AcceptsEveryFlagInBothForms) {
  auto o = parseArgs({"--json", "--baseline", "/tmp/b.json", "--expect-mtu=4200",
                      "--lossless-priority", "5", "--pod-mtu=4000", "--sysfs-root=/x"});
  ASSERT_TRUE(o.ok()) << o.error().msg;
  EXPECT_TRUE(o->json);
  EXPECT_FALSE(o->dot);
  EXPECT_EQ(o->baseline, "/tmp/b.json");
  EXPECT_EQ(o->doctor.expect_mtu, 4200);
  EXPECT_EQ(o->doctor.lossless_priority, 5);
  EXPECT_EQ(o->doctor.pod_mtu, 4000);
  EXPECT_EQ(o->sysfs_root, "/x");
  auto d = parseArgs({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->doctor.expect_mtu, 9000);
  EXPECT_EQ(d->doctor.lossless_priority, 3);
  EXPECT_EQ(d->doctor.pod_mtu, 0);  // not checked
  EXPECT_EQ(d->sysfs_root, "/");
}

TEST(DoctorCliParse, RejectsBadInputNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* mentions;
  };
  const std::vector<Case> cases = {
      {{"--expect-mtu"}, "--expect-mtu: needs a value"},
      {{"--expect-mtu", "9k"}, "--expect-mtu: \"9k\" is not an integer in [68, 65535]"},
      {{"--expect-mtu", "70000"}, "--expect-mtu"},
      {{"--lossless-priority", "8"}, "--lossless-priority"},
      {{"--lossless-priority", "-1"}, "--lossless-priority"},
      {{"--pod-mtu", "67"}, "--pod-mtu"},
      {{"--pod-mtu"}, "--pod-mtu: needs a value"},
      {{"--baseline="}, "--baseline"},
      {{"--sysfs-root", ""}, "--sysfs-root"},
      {{"--json=maybe"}, "--json"},
      {{"--json", "--dot"}, "--json excludes --dot"},
      {{"--verbose"}, "--verbose: unknown flag"},
      {{"extra"}, "extra: unexpected argument"},
  };
  for (const auto& c : cases) {
    auto o = parseArgs(c.args);
    ASSERT_FALSE(o.ok()) << c.args.front();
    EXPECT_EQ(o.error().code, ErrorCode::kInvalidConfig);
    EXPECT_THAT(o.error().msg, HasSubstr(c.mentions));
  }
}

struct CliRun {
  int rc;
  std::string out, err;
};

CliRun cli(DoctorNode& node, std::vector<std::string> args) {
  args.push_back("--sysfs-root");
  args.push_back(node.root().string());
  std::ostringstream out, err;
  const int rc = runCli(args, {.netlink = &node.netlink(), .pause = &node.pause()}, 5000, out, err);
  return {rc, out.str(), err.str()};
}

TEST(DoctorCli, ExitCodeIsZeroOnAHealthyNodeAndOneOnAFail) {
  DoctorNode node;
  CliRun ok = cli(node, {});
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("0 FAIL"));
  node.tree().writeAttr("/sys/class/net/ens1f0/mtu", "1500");
  CliRun bad = cli(node, {});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_THAT(bad.out, HasSubstr("2 FAIL"));  // mtu, and mtu_chain (its VFs are at 9000)
}

TEST(DoctorCli, UsageErrorsExitTwo) {
  DoctorNode node;
  CliRun r = cli(node, {"--lossless-priority", "9"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: rdmanet-doctor"));
  EXPECT_TRUE(r.out.empty());
  std::ostringstream out, err;
  EXPECT_EQ(runCli({"--sysfs-root", "/nonexistent/root"}, nullptr, 0, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("is not a directory"));
}

TEST(DoctorCli, HelpPrintsUsageAndExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(runCli({"--help"}, nullptr, 0, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("usage: rdmanet-doctor [OPTIONS]"));
  for (const char* flag : {"--json", "--dot", "--baseline FILE", "--expect-mtu N",
                           "--lossless-priority P", "--sysfs-root DIR", "--version"}) {
    EXPECT_THAT(out.str(), HasSubstr(flag));
  }
}

TEST(DoctorCli, VersionPrintsTheVersionAndExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(runCli({"--version"}, nullptr, 0, out, err), 0);
  EXPECT_EQ(out.str(), "rdmanet-doctor " + std::string(cli::version()) + "\n");
}

TEST(DoctorCli, BaselineIsSavedFirstThenDeltasAreReported) {
  DoctorNode node;
  const std::string file = (node.root() / "baseline.json").string();
  CliRun first = cli(node, {"--json", "--baseline", file});
  EXPECT_EQ(first.rc, 0);
  EXPECT_THAT(first.err, HasSubstr("saved counter baseline to " + file));
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(nlohmann::json::parse(first.out).contains("baseline_taken_at"));

  node.tree().writeAttr("/sys/class/infiniband/mlx5_6/ports/1/hw_counters/packet_seq_err", "11");
  CliRun second = cli(node, {"--json", "--baseline", file});
  EXPECT_EQ(second.rc, 0);  // retransmits WARN, they do not fail the node
  EXPECT_TRUE(second.err.empty()) << second.err;
  const auto j = nlohmann::json::parse(second.out);
  EXPECT_EQ(j["baseline_taken_at"], 5000);
  bool flagged = false;
  for (const auto& c : j["checks"]) {
    if (c["check"] == "counters" && c["device"] == "mlx5_6/1") {
      EXPECT_EQ(c["verdict"], "WARN");
      EXPECT_EQ(c["evidence"]["packet_seq_err"], "+11 (0 -> 11)");
      flagged = true;
    }
  }
  EXPECT_TRUE(flagged);
  // The baseline stays the first run's: a third run still sees the same growth.
  auto kept = loadBaseline(file);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->ports.at("mlx5_6/1").at("packet_seq_err"), 0u);
}

TEST(DoctorCli, CorruptBaselineIsAUsageError) {
  DoctorNode node;
  const std::string file = (node.root() / "baseline.json").string();
  node.tree().writeAttr("/baseline.json", "{oops");
  CliRun r = cli(node, {"--baseline", file});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--baseline"));
}

TEST(DoctorCli, DotPrintsGraphviz) {
  DoctorNode node;
  CliRun r = cli(node, {"--dot"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(r.out.starts_with("digraph rdmanet_node {")) << r.out;
}

}  // namespace
}  // namespace rdmanet::doctor
