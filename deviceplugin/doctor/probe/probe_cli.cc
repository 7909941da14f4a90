#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "common/cli/command_line.h"
#include "common/os/atomic_file.h"
#include "deviceplugin/doctor/probe/probe.h"
#include "deviceplugin/doctor/probe/probe_rdma.h"

namespace rdmanet::doctor {
namespace {

// Atomically where it can be. Kubelet's /dev/termination-log is a file bind-mounted into the
// container: nothing can be renamed over it (EBUSY), so a target that is a mount point is
// rewritten in place, which is what kubelet reads when the container ends.
Status writeSummary(const std::string& path, const std::string& text) {
  AtomicWriteOptions opts;
  opts.mode = 0644;
  opts.durable = false;
  if (writeFileAtomic(path, text + "\n", opts).ok()) return okStatus();
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "opening " + path);
  const std::string line = text + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int err = errno;
  ::close(fd);
  if (!ok) return errnoError(ErrorCode::kIoFailure, err, "writing " + path);
  return okStatus();
}

}  // namespace

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
  if (!o->summary_file.empty()) {
    if (auto s = writeSummary(o->summary_file, renderProbeSummary(r)); !s.ok()) {
      err << "rdmanet-doctor probe: --summary-file: " << s.error().msg << "\n";
      return 1;
    }
  }
  return r.pass ? 0 : 1;
}

}  // namespace rdmanet::doctor
