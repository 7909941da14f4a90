// rdmanet-fake-kubelet: a stand-in for kubelet's device manager (see fake_kubelet.h), driven by
// commands on stdin; events go to stdout as JSON lines and to stderr as text.
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/deviceplugin/fake_kubelet/commands.h"
#include "tests/deviceplugin/fake_kubelet/fake_kubelet.h"

namespace {

constexpr const char* kUsage = R"(Usage: rdmanet-fake-kubelet --kubelet-dir DIR [options]

Serves kubelet's Registration on DIR/device-plugins/kubelet.sock, then talks to each plugin
that registers like kubelet does (GetDevicePluginOptions, ListAndWatch). Reads commands from
stdin, one per line; reports events as JSON lines and as text.

Options:
  --kubelet-dir DIR       kubelet root (required)
  --events FILE           JSON-lines events to FILE ("-" = stdout, the default)
  --log FILE              human-readable events to FILE ("-" = stderr, the default)
  --refuse-registration   answer every Register with an error (see also "refuse on|off")
  --serve                 keep serving after stdin ends, until SIGTERM/SIGINT
)";

}  // namespace

int main(int argc, char** argv) {
  std::string dir, events = "-", human = "-";
  bool refuse = false, serve = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--kubelet-dir")
        dir = value();
      else if (a == "--events")
        events = value();
      else if (a == "--log")
        human = value();
      else if (a == "--refuse-registration")
        refuse = true;
      else if (a == "--serve")
        serve = true;
      else if (a == "--help") {
        std::cout << kUsage << rdmanet::fakekubelet::commandHelp();
        return 0;
      } else
        throw std::runtime_error("unknown option " + a);
    } catch (const std::exception& e) {
      std::cerr << "rdmanet-fake-kubelet: " << e.what() << "\n" << kUsage;
      return 1;
    }
  }
  if (dir.empty()) {
    std::cerr << "rdmanet-fake-kubelet: --kubelet-dir is required\n" << kUsage;
    return 1;
  }
  std::ofstream ev_file, log_file;
  if (events != "-") ev_file.open(events, std::ios::app);
  if (human != "-") log_file.open(human, std::ios::app);
  rdmanet::fakekubelet::EventLog log(events == "-" ? &std::cout : &ev_file,
                                     human == "-" ? &std::cerr : &log_file);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // handled below, after stdin
  std::signal(SIGPIPE, SIG_IGN);
  rdmanet::fakekubelet::FakeKubelet kubelet(dir, &log);
  kubelet.setRefuse(refuse);
  if (!kubelet.start()) return 2;
  // SIGTERM/SIGINT end the process whatever the main thread is doing (reading stdin, running
  // a command): a stand-in kubelet must be easy to stop.
  std::thread([&] {
    int sig = 0;
    sigwait(&set, &sig);
    log.emit("exit", {{"signal", sig}}, "terminated");
    std::_Exit(0);
  }).detach();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!rdmanet::fakekubelet::runCommand(kubelet, log, line)) break;
  }
  if (serve) {
    while (true) pause();
  }
  kubelet.stop();
  log.emit("exit", nlohmann::json::object(), "bye");
  return 0;
}
