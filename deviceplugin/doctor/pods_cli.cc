// The `rdmanet-doctor pods` command line (pods.h).
#include <filesystem>

#include "common/cli/command_line.h"
#include "deviceplugin/doctor/pods.h"

namespace rdmanet::doctor {
namespace {

struct PodsOptions {
  int interval = 5;
  bool json = false;
  std::string state_dir = "/var/lib/cni/rdmanet";
  std::string sysfs_root = "/";
  bool help = false;
  bool version = false;
};

void defineFlags(CLI::App& app, PodsOptions& o) {
  app.name("rdmanet-doctor pods");
  app.description(
      "Lists the pods on this node with their RDMA devices, mode, priority and counter rates\n"
      "over an interval, worst first, with a verdict each. Exit 0: no FAIL; 1: a pod FAILed;\n"
      "2: usage error.");
  cli::configure(app);
  app.add_option("--interval", o.interval, "seconds between the two readings (default 5)")
      ->type_name("S")
      ->check(cli::intIn(1, 3600));
  app.add_flag("--json", o.json, "print the verdicts as JSON");
  cli::textOption(app, "--cni-state-dir", o.state_dir,
                  "the rdmanet CNI's state directory (default /var/lib/cni/rdmanet)", "DIR");
  cli::textOption(app, "--sysfs-root", o.sysfs_root,
                  "directory that plays \"/\" for sysfs reads (default /)", "DIR");
}

}  // namespace

int runPodsCli(const std::vector<std::string>& args, const PodsCliDeps& deps, std::ostream& out,
               std::ostream& err) {
  auto opts = cli::parseInto<PodsOptions>(args, defineFlags);
  const auto help = [] { return cli::helpOf<PodsOptions>(defineFlags); };
  if (auto code = cli::answerUsage(opts, "rdmanet-doctor pods", "rdmanet-doctor", help, out, err)) {
    return *code;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(opts->state_dir, ec)) {
    err << "rdmanet-doctor pods: --cni-state-dir: \"" << opts->state_dir
        << "\" is not a directory (no rdmanet attachment was ever made here?)\n";
    return 2;
  }
  const auto before = deps.read(opts->state_dir, opts->sysfs_root);
  deps.wait(opts->interval);
  const auto after = deps.read(opts->state_dir, opts->sysfs_root);
  const auto verdicts = judgePods(before, after, opts->interval);
  if (opts->json) {
    renderPodsJson(verdicts, opts->interval, out);
  } else {
    renderPodsTable(verdicts, opts->interval, out);
  }
  for (const auto& v : verdicts) {
    if (v.verdict == Verdict::kFail) return 1;
  }
  return 0;
}

}  // namespace rdmanet::doctor
