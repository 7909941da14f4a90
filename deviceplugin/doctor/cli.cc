#include "deviceplugin/doctor/cli.h"

#include <filesystem>
#include <optional>

#include "common/base/sysfs.h"
#include "common/cli/command_line.h"
#include "common/inventory/node.h"
#include "deviceplugin/doctor/counters.h"
#include "deviceplugin/doctor/render.h"

namespace rdmanet::doctor {
namespace {

constexpr const char* kDescription =
    "Runs the pre-training network checklist on this node. Exit 0: no FAIL; 1: a check\n"
    "FAILed; 2: usage error. --baseline FILE saves the RDMA counters when FILE does not\n"
    "exist, and otherwise reports their growth since it.";

// Every flag of rdmanet-doctor (and `rdmanet-device-plugin doctor`), in --help's order.
void defineFlags(CLI::App& app, CliOptions& o) {
  app.name("rdmanet-doctor");
  app.description(kDescription);
  cli::configure(app);
  auto* json = app.add_flag("--json", o.json, "print the report as JSON");
  auto* dot = app.add_flag("--dot", o.dot, "print the node's topology as Graphviz dot");
  json->excludes(dot);
  cli::textOption(app, "--baseline", o.baseline,
                  "RDMA counter baseline: saved when FILE does not exist,\ncompared with otherwise",
                  "FILE");
  app.add_option("--expect-mtu", o.doctor.expect_mtu,
                 "the MTU every data port must have at least (default 9000)")
      ->type_name("N")
      ->check(cli::intIn(68, 65535));
  app.add_option("--lossless-priority", o.doctor.lossless_priority,
                 "the 802.1p priority PFC must protect, 0-7 (default 3)")
      ->type_name("P")
      ->check(cli::intIn(0, 7));
  app.add_option("--pod-mtu", o.doctor.pod_mtu,
                 "the MTU pods get on these ports: checks the chain pod <= VF <= PF")
      ->type_name("N")
      ->check(cli::intIn(68, 65535));
  cli::textOption(app, "--sysfs-root", o.sysfs_root,
                  "directory that plays \"/\" for sysfs reads (default /)", "DIR");
}

}  // namespace

std::string usage() { return cli::helpOf<CliOptions>(defineFlags); }

Result<CliOptions> parseArgs(const std::vector<std::string>& args) {
  return cli::parseInto<CliOptions>(args, defineFlags);
}

int runCli(const std::vector<std::string>& args, Netlink* netlink, int64_t now_unix,
           std::ostream& out, std::ostream& err) {
  return runCli(args, CliSeams{.netlink = netlink}, now_unix, out, err);
}

int runCli(const std::vector<std::string>& args, const CliSeams& seams, int64_t now_unix,
           std::ostream& out, std::ostream& err) {
  auto opts = parseArgs(args);
  if (auto code = cli::answerUsage(opts, "rdmanet-doctor", "rdmanet-doctor", usage, out, err)) {
    return *code;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(opts->sysfs_root, ec)) {
    err << "rdmanet-doctor: --sysfs-root: \"" << opts->sysfs_root << "\" is not a directory\n";
    return 2;
  }
  std::optional<CounterSnapshot> baseline;
  const bool save_baseline =
      !opts->baseline.empty() && !std::filesystem::exists(opts->baseline, ec);
  if (!opts->baseline.empty() && !save_baseline) {
    auto b = loadBaseline(opts->baseline);
    if (!b.ok()) {
      err << "rdmanet-doctor: --baseline: " << b.error().msg << "\n";
      return 2;
    }
    baseline = std::move(b).value();
  }
  const Sysfs sysfs(opts->sysfs_root);
  const NodeInventory inv = scanNode(sysfs, kScan);
  // Verbs describe this machine's devices, not a simulated tree's: against another root the
  // RDMA facts come from that tree's sysfs only.
  const bool real_root = std::filesystem::path(opts->sysfs_root).lexically_normal() == "/";
  const DoctorReport report = runDoctor({.sysfs = sysfs,
                                         .netlink = seams.netlink,
                                         .verbs = real_root ? seams.verbs : nullptr,
                                         .pause = seams.pause,
                                         .options = opts->doctor,
                                         .baseline = baseline ? &*baseline : nullptr,
                                         .now_unix = now_unix},
                                        inv);
  if (save_baseline) {
    if (auto s = saveBaseline(opts->baseline, report.counters); !s.ok()) {
      err << "rdmanet-doctor: --baseline: " << s.error().msg << "\n";
      return 2;
    }
    err << "rdmanet-doctor: saved counter baseline to " << opts->baseline
        << "; run again with the same --baseline to see what grows\n";
  }
  if (opts->dot) {
    out << renderDot(inv, &report);
  } else if (opts->json) {
    out << renderJson(report);
  } else {
    out << renderTable(report);
  }
  return report.exitCode();
}

}  // namespace rdmanet::doctor
