#include <iostream>

#include "common/cli/command_line.h"
#include "deviceplugin/doctor/probe/probe.h"
#include "deviceplugin/doctor/probe/probe_rdma.h"

namespace rdmanet::doctor {

int runProbeCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto o = parseProbeArgs(args);
  if (auto code =
          cli::answerUsage(o, "rdmanet-doctor probe", "rdmanet-doctor", probeUsage, out, err)) {
    return *code;
  }
  if (o->listen) {
    if (auto s = runProbeServer(*o, err); !s.ok()) {
      err << "rdmanet-doctor probe: " << s.error().msg << "\n";
      return 1;
    }
    return 0;
  }
  ProbeReport r = runProbeClient(*o);
  judgeProbe(r);
  out << (o->json ? renderProbeJson(r) : renderProbeTable(r));
  return r.pass ? 0 : 1;
}

}  // namespace rdmanet::doctor
