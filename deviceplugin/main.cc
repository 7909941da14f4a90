// rdmanet-device-plugin: kubelet device plugin for RDMA VFs and shared HCAs. See app.h.
#include <exception>
#include <iostream>

#include "deviceplugin/daemon/app.h"

int main(int argc, char** argv) {
  try {
    return rdmanet::dp::runDevicePlugin(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "rdmanet-device-plugin: unexpected error: " << e.what() << "\n";
    return 2;
  }
}
