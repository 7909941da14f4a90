#include "deviceplugin/doctor/cli.h"

#include <charconv>
#include <filesystem>
#include <optional>

#include "common/base/sysfs.h"
#include "common/inventory/node.h"
#include "deviceplugin/doctor/cli_flags.h"
#include "deviceplugin/doctor/counters.h"
#include "deviceplugin/doctor/render.h"

namespace rdmanet::doctor {

std::string usage() {
  return "usage: rdmanet-doctor [--json] [--dot] [--baseline FILE] [--expect-mtu N]\n"
         "                      [--lossless-priority P] [--pod-mtu N] [--sysfs-root DIR]\n"
         "Runs the pre-training network checklist on this node. Exit 0: no FAIL; 1: a check\n"
         "FAILed; 2: usage error. --baseline FILE saves the RDMA counters when FILE does not\n"
         "exist, and otherwise reports their growth since it. --pod-mtu N checks the MTU chain\n"
         "pod <= VF <= PF with the MTU pods get.\n";
}

Result<CliOptions> parseArgs(const std::vector<std::string>& args) {
  CliOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (auto eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    auto value = [&]() -> Result<std::string> {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) return usageError(flag + " needs a value");
      return args[++i];
    };
    if ((flag == "--json" || flag == "--dot" || flag == "--help" || flag == "-h") && inline_value) {
      return usageError(flag + " takes no value");
    }
    if (flag == "--json") {
      o.json = true;
    } else if (flag == "--dot") {
      o.dot = true;
    } else if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (flag == "--baseline") {
      RDMANET_ASSIGN_OR_RETURN(o.baseline, value());
      if (o.baseline.empty()) return usageError("--baseline needs a file name");
    } else if (flag == "--sysfs-root") {
      RDMANET_ASSIGN_OR_RETURN(o.sysfs_root, value());
      if (o.sysfs_root.empty()) return usageError("--sysfs-root needs a directory");
    } else if (flag == "--expect-mtu") {
      RDMANET_ASSIGN_OR_RETURN(std::string v, value());
      RDMANET_ASSIGN_OR_RETURN(o.doctor.expect_mtu, intIn(flag, v, 68, 65535));
    } else if (flag == "--lossless-priority") {
      RDMANET_ASSIGN_OR_RETURN(std::string v, value());
      RDMANET_ASSIGN_OR_RETURN(o.doctor.lossless_priority, intIn(flag, v, 0, 7));
    } else if (flag == "--pod-mtu") {
      RDMANET_ASSIGN_OR_RETURN(std::string v, value());
      RDMANET_ASSIGN_OR_RETURN(o.doctor.pod_mtu, intIn(flag, v, 68, 65535));
    } else {
      return usageError("unknown argument \"" + args[i] + "\"");
    }
  }
  if (o.json && o.dot) return usageError("--json and --dot are exclusive");
  return o;
}

int runCli(const std::vector<std::string>& args, Netlink* netlink, int64_t now_unix,
           std::ostream& out, std::ostream& err) {
  return runCli(args, CliSeams{.netlink = netlink}, now_unix, out, err);
}

int runCli(const std::vector<std::string>& args, const CliSeams& seams, int64_t now_unix,
           std::ostream& out, std::ostream& err) {
  auto opts = parseArgs(args);
  if (!opts.ok()) {
    err << "rdmanet-doctor: " << opts.error().msg << "\n" << usage();
    return 2;
  }
  if (opts->help) {
    out << usage();
    return 0;
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
  const NodeInventory inv = scanNode(sysfs);
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
