#pragma once
// The one-shot modes of rdmanet-device-plugin, besides serving kubelet: each runs and returns
// the process exit code.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rdmanet::dp {

// `rdmanet-device-plugin doctor ARGS...`: the node doctor once, exactly as rdmanet-doctor
// (doctor/cli.h): same flags, output and exit codes (0 pass, 1 a check FAILed, 2 usage error).
// `doctor probe ARGS...` is `rdmanet-doctor probe` (doctor/probe/probe.h), so the image's one
// binary is enough for the pre-flight check; `doctor pods ARGS...` is `rdmanet-doctor pods`
// (doctor/pods.h). `args` excludes "doctor".
int runDoctorCommand(const std::vector<std::string>& args);

// `--install-cni DIR`: copies the `rdmanet` binary next to this executable into DIR
// (install_cni.h). 0 on success; 1 with a message on stderr naming the path otherwise.
int runInstallCni(std::string_view argv0, const std::filesystem::path& dir);

}  // namespace rdmanet::dp
