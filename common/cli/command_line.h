#pragma once
// One command-line parser for rdmanet's binaries (the device plugin daemon and the doctor):
// each defines its flags on a CLI11 App (Debian's libcli11-dev), and this file gives them the
// same conventions:
//   - --help (-h) prints the generated help, --version prints rdmanet's version;
//   - "--flag VALUE" and "--flag=VALUE" both work; boolean flags also take =true / =false;
//   - every error is error 7 whose message starts with the flag it is about:
//       "--frob: unknown flag (see --help)", "stray: unexpected argument (flags start with --)",
//       "--config: needs a value", "--cdi: \"maybe\" is not a valid value",
//       "--expect-mtu: \"9k\" is not an integer in [68, 65535]".

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::cli {

// rdmanet's version ("0.1.0"), the project's CMake version.
std::string_view version();

// Sets the conventions above on `app`: the version flag, "usage:" as the usage label,
// unknown arguments collected (so parse() can name them) rather than thrown as one list.
void configure(CLI::App& app);

enum class Parsed { kRun, kHelp, kVersion };
// Parses `args` (argv without argv[0]) into the options defined on `app`. kHelp / kVersion
// when --help / --version was given (the caller prints app.help() or version()).
Result<Parsed> parse(CLI::App& app, const std::vector<std::string>& args);

// The two entry points of a command line whose flags `define(app, options)` sets on an App:
// its generated help, and `args` parsed into a fresh Options (whose `help` and `version` say
// what was asked).
template <typename Options, typename Define>
std::string helpOf(Define define) {
  Options unused{};
  CLI::App app;
  define(app, unused);
  return app.help();
}
template <typename Options, typename Define>
Result<Options> parseInto(const std::vector<std::string>& args, Define define) {
  Options o{};
  CLI::App app;
  define(app, o);
  RDMANET_ASSIGN_OR_RETURN(const Parsed parsed, parse(app, args));
  o.help = parsed == Parsed::kHelp;
  o.version = parsed == Parsed::kVersion;
  return o;
}

// What a command does before its work, once `args` are parsed into `opts` (parseInto): a parse
// error goes to `err` as "<prog>: <message>" followed by help() (exit 2); --help prints help()
// and --version "<binary> <version>" to `out` (exit 0). nullopt: none of these, the command runs.
template <typename Options, typename Help>
std::optional<int> answerUsage(const Result<Options>& opts, std::string_view prog,
                               std::string_view binary, Help help, std::ostream& out,
                               std::ostream& err) {
  if (!opts.ok()) {
    err << prog << ": " << opts.error().msg << "\n" << help();
    return 2;
  }
  if (opts->help) {
    out << help();
    return 0;
  }
  if (opts->version) {
    out << binary << " " << version() << "\n";
    return 0;
  }
  return std::nullopt;
}

// Validators, for the message after "--flag: ":
// a value that must not be empty ("--config ''": "empty value");
CLI::Validator nonEmpty();
// a decimal integer in [lo, hi] ("--expect-mtu 9k": "\"9k\" is not an integer in [68, 65535]").
CLI::Validator intIn(int lo, int hi);

// a decimal number in [lo, hi] ("--bw-percent 9O": "\"9O\" is not a number in [1, 100]").
CLI::Validator numberIn(double lo, double hi);

// A string option that may not be empty (nonEmpty), stored in `into`; `type` names its value in
// --help (DIR, FILE, NAME, ADDR, ...).
CLI::Option* textOption(CLI::App& app, const std::string& name, std::string& into,
                        const std::string& desc, const std::string& type);

}  // namespace rdmanet::cli
