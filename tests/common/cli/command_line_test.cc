// The shared command-line conventions on a small CLI11 App: both flag forms, help and
// version, and every kind of error naming its flag.
#include "common/cli/command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rdmanet::cli {
namespace {

using ::testing::HasSubstr;

struct Opts {
  std::string dir = "/";
  int n = 5;
  bool on = false;
  double pct = 90;
};

void define(CLI::App& app, Opts& o) {
  app.name("tool");
  configure(app);
  app.add_option("--dir", o.dir, "a directory")->type_name("DIR")->check(nonEmpty());
  app.add_option("--n", o.n, "a count")->type_name("N")->check(intIn(1, 9));
  app.add_flag("--on", o.on, "a switch");
  app.add_option("--pct", o.pct, "a share")->type_name("PCT")->check(numberIn(0.5, 100));
}

Result<Parsed> run(Opts& o, const std::vector<std::string>& args) {
  CLI::App app;
  define(app, o);
  return parse(app, args);
}

TEST(CommandLineTest, TakesBothFormsAndBooleanFlagValues) {
  Opts o;
  auto p = run(o, {"--dir", "/a", "--n=7", "--on", "--pct", "85.5"});
  ASSERT_TRUE(p.ok()) << p.error().msg;
  EXPECT_EQ(*p, Parsed::kRun);
  EXPECT_EQ(o.dir, "/a");
  EXPECT_EQ(o.n, 7);
  EXPECT_TRUE(o.on);
  EXPECT_EQ(o.pct, 85.5);
  Opts off;
  ASSERT_TRUE(run(off, {"--on=false"}).ok());
  EXPECT_FALSE(off.on);
}

TEST(CommandLineTest, HelpAndVersionAreReportedNotPrinted) {
  Opts o;
  EXPECT_EQ(*run(o, {"--help"}), Parsed::kHelp);
  EXPECT_EQ(*run(o, {"-h"}), Parsed::kHelp);
  EXPECT_EQ(*run(o, {"--version"}), Parsed::kVersion);
  EXPECT_FALSE(version().empty());
  CLI::App app;
  define(app, o);
  EXPECT_THAT(app.help(), HasSubstr("usage: tool [OPTIONS]"));
  EXPECT_THAT(app.help(), HasSubstr("--dir DIR"));
  EXPECT_THAT(app.help(), HasSubstr("--version"));
}

TEST(CommandLineTest, EveryErrorIsSevenAndStartsWithTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string msg;
  };
  for (const Case& c : {
           Case{{"--frob"}, "--frob: unknown flag (see --help)"},
           Case{{"--frob=2", "x"}, "--frob: unknown flag"},
           Case{{"-x"}, "-x: unknown flag"},
           Case{{"stray"}, "stray: unexpected argument (flags start with --)"},
           Case{{"--dir"}, "--dir: needs a value"},
           Case{{"--dir="}, "--dir: needs a value"},
           Case{{"--dir", ""}, "--dir: empty value"},
           Case{{"--n", "10"}, "--n: \"10\" is not an integer in [1, 9]"},
           Case{{"--n", "2x"}, "--n: \"2x\" is not an integer in [1, 9]"},
           Case{{"--on=maybe"}, "--on: \"maybe\" is not a valid value"},
           Case{{"--pct", "9O"}, "--pct: \"9O\" is not a number in [0.5, 100]"},
           Case{{"--pct", "0.1"}, "--pct: \"0.1\" is not a number in [0.5, 100]"},
           Case{{"--n", "1", "--n", "2"}, "--n"},
       }) {
    Opts o;
    auto p = run(o, c.args);
    ASSERT_FALSE(p.ok()) << c.msg;
    EXPECT_EQ(p.error().code, ErrorCode::kInvalidConfig) << c.msg;
    EXPECT_THAT(p.error().msg, HasSubstr(c.msg));
    EXPECT_TRUE(p.error().msg.starts_with(c.args.front().substr(0, c.args.front().find('='))))
        << p.error().msg;
  }
}

}  // namespace
}  // namespace rdmanet::cli
