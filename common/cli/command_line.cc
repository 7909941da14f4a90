#include "common/cli/command_line.h"

#include <fmt/format.h>

#include <charconv>

namespace rdmanet::cli {

namespace {

Error usageError(std::string msg) { return makeError(ErrorCode::kInvalidConfig, std::move(msg)); }

// The flag a CLI11 message is about: its text up to the first ": " ("--config: 1 required FILE
// missing").
std::string_view flagOf(std::string_view msg) {
  const auto colon = msg.find(": ");
  return colon == std::string_view::npos ? std::string_view() : msg.substr(0, colon);
}

}  // namespace

std::string_view version() { return RDMANET_VERSION; }

void configure(CLI::App& app) {
  app.set_version_flag("--version", std::string(version()), "Print the version and exit");
  app.get_formatter()->label("Usage", "usage");
  app.allow_extras(true);
}

Result<Parsed> parse(CLI::App& app, const std::vector<std::string>& args) {
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(std::move(reversed));
  } catch (const CLI::CallForHelp&) {
    return Parsed::kHelp;
  } catch (const CLI::CallForVersion&) {
    return Parsed::kVersion;
  } catch (const CLI::ArgumentMismatch& e) {
    const std::string_view msg = e.what();
    const std::string_view flag = flagOf(msg);
    // "--config: 1 required FILE missing": the flag came last, or as "--config=".
    if (!flag.empty() && msg.find(" required ") != std::string_view::npos &&
        msg.ends_with(" missing")) {
      return usageError(std::string(flag) + ": needs a value");
    }
    return usageError(std::string(msg));
  } catch (const CLI::ConversionError& e) {
    // "Could not convert: --cdi = maybe" (a boolean flag given another word).
    constexpr std::string_view kPrefix = "Could not convert: ";
    const std::string_view msg = e.what();
    const auto eq = msg.find(" = ");
    if (msg.starts_with(kPrefix) && eq != std::string_view::npos) {
      return usageError(fmt::format("{}: \"{}\" is not a valid value",
                                    msg.substr(kPrefix.size(), eq - kPrefix.size()),
                                    msg.substr(eq + 3)));
    }
    return usageError(std::string(msg));
  } catch (const CLI::ParseError& e) {
    return usageError(e.what());
  }
  const std::vector<std::string> extra = app.remaining();
  if (!extra.empty()) {
    const std::string& first = extra.front();
    if (first.starts_with("-")) {
      return usageError(first.substr(0, first.find('=')) + ": unknown flag (see --help)");
    }
    return usageError(first + ": unexpected argument (flags start with --)");
  }
  return Parsed::kRun;
}

CLI::Validator nonEmpty() {
  return CLI::Validator(
      [](const std::string& v) { return v.empty() ? std::string("empty value") : std::string(); },
      "", "non-empty");
}

CLI::Validator intIn(int lo, int hi) {
  return CLI::Validator(
      [lo, hi](const std::string& v) {
        int n = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec == std::errc() && p == v.data() + v.size() && n >= lo && n <= hi) {
          return std::string();
        }
        return "\"" + v + "\" is not an integer in [" + std::to_string(lo) + ", " +
               std::to_string(hi) + "]";
      },
      "", "integer");
}

CLI::Validator numberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](const std::string& v) {
        double d = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
        if (ec == std::errc() && p == v.data() + v.size() && d >= lo && d <= hi) {
          return std::string();
        }
        return fmt::format("\"{}\" is not a number in [{}, {}]", v, lo, hi);
      },
      "", "number");
}

CLI::Option* textOption(CLI::App& app, const std::string& name, std::string& into,
                        const std::string& desc, const std::string& type) {
  return app.add_option(name, into, desc)->type_name(type)->check(nonEmpty());
}

}  // namespace rdmanet::cli
