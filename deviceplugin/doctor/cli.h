#pragma once
// The `rdmanet-doctor` command line, as a library so the integration test and main.cc share it.
// Parsed with CLI11 (common/cli/command_line.h; --help is generated, --version exists):
//
//   rdmanet-doctor [--json] [--dot] [--baseline FILE] [--expect-mtu N]
//                  [--lossless-priority P] [--pod-mtu N] [--sysfs-root DIR]
//
// Exit code: 0 when nothing FAILs (WARN and UNKNOWN do not fail a node), 1 on any FAIL, 2 on a
// usage error (unknown flag, bad value, unreadable baseline, missing sysfs root).
// --baseline FILE: when FILE does not exist the run saves its counters there; when it exists
// the run reports the growth since then and leaves FILE alone.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/net/netlink.h"
#include "common/net/pause.h"
#include "common/rdma/rdma_verbs.h"
#include "deviceplugin/doctor/doctor.h"

namespace rdmanet::doctor {

struct CliOptions {
  bool json = false;
  bool dot = false;
  bool help = false;
  bool version = false;
  std::string baseline{};
  std::string sysfs_root = "/";
  DoctorOptions doctor{};
};

// The generated --help text ("usage: rdmanet-doctor [OPTIONS]" and every flag).
std::string usage();
// args excludes argv[0]. Error 7 naming the flag on anything invalid (--json and --dot
// together: "--json excludes --dot").
Result<CliOptions> parseArgs(const std::vector<std::string>& args);

// One doctor run: the report on `out`, notes and errors on `err`; returns the exit code.
// `netlink` is bound to the host netns (nullptr: DCB checks UNKNOWN).
int runCli(const std::vector<std::string>& args, Netlink* netlink, int64_t now_unix,
           std::ostream& out, std::ostream& err);

// The seams a run reads through (each may be null: its checks say UNKNOWN or use sysfs).
struct CliSeams {
  Netlink* netlink = nullptr;
  RdmaVerbs* verbs = nullptr;
  PauseReader* pause = nullptr;
};
int runCli(const std::vector<std::string>& args, const CliSeams& seams, int64_t now_unix,
           std::ostream& out, std::ostream& err);

}  // namespace rdmanet::doctor
