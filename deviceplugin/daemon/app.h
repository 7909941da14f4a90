#pragma once
// The whole rdmanet-device-plugin program behind main(): flags, config, real dependencies.

namespace rdmanet::dp {

// Returns the process exit code: 0 on a clean stop, 1 for bad flags or config (the message
// names the flag or key), 2 when serving could not start.
int runDevicePlugin(int argc, const char* const* argv);

}  // namespace rdmanet::dp
