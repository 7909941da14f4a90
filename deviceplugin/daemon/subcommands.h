#pragma once
// The one-shot modes of rdmanet-device-plugin, besides serving kubelet: each runs and returns
// the process exit code.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deviceplugin/daemon/flags.h"

namespace rdmanet::dp {

// The flags that answer and exit instead of serving: --help, --version, --check-config FILE and
// --install-cni DIR. Their exit code; nullopt when none was given (serve).
std::optional<int> runOneShot(const Flags& flags, std::string_view argv0);

// `rdmanet-device-plugin doctor ARGS...`: the node doctor once, exactly as rdmanet-doctor
// (doctor/cli.h): same flags, output and exit codes (0 pass, 1 a check FAILed, 2 usage error).
// `doctor probe ARGS...` is `rdmanet-doctor probe` (doctor/probe/probe.h), so the image's one
// binary is enough for the pre-flight check; `doctor pods ARGS...` is `rdmanet-doctor pods`
// (doctor/pods.h); `doctor preflight ARGS...` is `rdmanet-doctor preflight`
// (doctor/preflight/preflight.h). `args` excludes "doctor".
int runDoctorCommand(const std::vector<std::string>& args);

// `--install-cni DIR`: copies the `rdmanet` binary next to this executable into DIR
// (install_cni.h). 0 on success; 1 with a message on stderr naming the path otherwise.
int runInstallCni(std::string_view argv0, const std::filesystem::path& dir);

// `--check-config FILE`: validates FILE and lists its pools. 0 when it is valid; 1 with the
// message naming the key otherwise.
int runCheckConfig(const std::filesystem::path& file);

}  // namespace rdmanet::dp
