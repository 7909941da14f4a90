#include <fmt/format.h>
#include <signal.h>

#include <cstdlib>
#include <random>
#include <thread>

#include "common/cli/command_line.h"
#include "deviceplugin/doctor/preflight/preflight.h"
#include "deviceplugin/doctor/preflight/render.h"
#include "deviceplugin/doctor/preflight/run.h"

namespace rdmanet::doctor::preflight {
namespace {

constexpr const char* kProg = "rdmanet-doctor preflight";

// --kubeconfig, else the first file of $KUBECONFIG, else the pod's service account.
Result<kube::KubeConfig> hostKubeConfig(const PreflightOptions& o) {
  if (!o.kubeconfig.empty()) return kube::loadKubeconfig(o.kubeconfig, o.context);
  const char* env = std::getenv("KUBECONFIG");
  if (env != nullptr && *env != '\0') {
    const std::string first = std::string(env).substr(0, std::string(env).find(':'));
    return kube::loadKubeconfig(first, o.context);
  }
  auto in_cluster = kube::inClusterConfig(kube::inClusterEnvFromProcess());
  if (!in_cluster.ok()) {
    return in_cluster.error().context("no --kubeconfig, no $KUBECONFIG, and not in a pod");
  }
  return in_cluster;
}

std::string randomRunId() {
  std::random_device rd;
  return fmt::format("{:08x}", rd());
}

}  // namespace

PreflightCliDeps hostPreflightDeps(const Clock& clock) {
  return {.kube_config = hostKubeConfig,
          .clock = &clock,
          .tick = [&clock] { clock.sleepFor(std::chrono::seconds(1)); },
          .wall_seconds = wallSeconds,
          .run_id = randomRunId};
}

int runPreflightCli(const std::vector<std::string>& args, const PreflightCliDeps& deps,
                    std::ostream& out, std::ostream& err) {
  auto o = parsePreflightArgs(args);
  if (auto code = cli::answerUsage(o, kProg, "rdmanet-doctor", preflightUsage, out, err)) {
    return *code;
  }
  auto config = deps.kube_config(*o);
  if (!config.ok()) {
    err << kProg << ": " << config.error().msg << "\n";
    return 2;
  }
  kube::ClientOptions copts = deps.client;
  if (copts.clock == nullptr) copts.clock = deps.clock;
  copts.user_agent = "rdmanet-preflight";
  kube::KubeClient client(std::move(*config), copts);
  const PreflightSeams seams{.client = &client,
                             .clock = deps.clock,
                             .tick = deps.tick,
                             .wall_seconds = deps.wall_seconds,
                             .run_id = deps.run_id(),
                             .stop = deps.stop,
                             .progress = &err};
  auto report = runPreflight(*o, seams);
  if (!report.ok()) {
    err << kProg << ": " << report.error().msg << "\n";
    return 2;
  }
  out << (o->json ? renderPreflightJson(*report) : renderPreflightTable(*report));
  return report->verdict == Verdict::kFail ? 1 : 0;
}

int runHostPreflight(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // Blocked here, so only the watcher below takes them (the client makes no threads of its
  // own: libcurl runs with CURLOPT_NOSIGNAL in this one).
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  std::atomic<bool> stop{false}, done{false};
  std::thread watcher([&] {
    const timespec poll{.tv_sec = 0, .tv_nsec = 200'000'000};
    while (!done.load()) {
      if (sigtimedwait(&set, nullptr, &poll) > 0) stop = true;
    }
  });
  const SteadyClock clock;
  PreflightCliDeps deps = hostPreflightDeps(clock);
  deps.stop = &stop;
  const int code = runPreflightCli(args, deps, out, err);
  done = true;
  watcher.join();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return code;
}

}  // namespace rdmanet::doctor::preflight
