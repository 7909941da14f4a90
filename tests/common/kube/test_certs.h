#pragma once
// Throw-away PKI for the TLS tests, made with the openssl command (Debian's openssl package):
// ca.crt/ca.key, server.crt/server.key (SAN IP 127.0.0.1, signed by the CA) and
// client.crt/client.key (CN system:node:node-1, signed by the CA), all in `dir`.

#include <filesystem>
#include <string>

namespace rdmanet::kube {

// "" on success, else what failed.
std::string makeTestCerts(const std::filesystem::path& dir);

}  // namespace rdmanet::kube
