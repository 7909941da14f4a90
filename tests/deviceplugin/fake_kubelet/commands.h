#pragma once
// The fake kubelet's stdin commands. See commandHelp().

#include <string>

#include "tests/deviceplugin/fake_kubelet/fake_kubelet.h"

namespace rdmanet::fakekubelet {

std::string commandHelp();
// Runs one command line; false for "quit". Every command ends with a "done" event
// {"cmd": ..., "ok": ...} so a driver can wait for it.
bool runCommand(FakeKubelet& k, EventLog& log, const std::string& line);

}  // namespace rdmanet::fakekubelet
