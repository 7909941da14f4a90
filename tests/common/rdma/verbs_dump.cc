// rdmanet-verbs-dump DEVICE: prints what IbvRdmaVerbs::query() answers, one fact per line, so
// the VM test (tests/vm/doctor_triad.sh) can compare it field by field with `ibv_devinfo -v`:
//   port N state S | active_mtu B | max_mtu B | link_layer L | rate R
//   gid N I ADDR TYPE NDEV      (ADDR as inet_ntop prints it, like ibv_devinfo)
// Exit 1 with the error on stderr when the query fails.
#include <arpa/inet.h>

#include <iostream>

#include "common/rdma/ibv_verbs.h"

namespace {

std::string compact(const std::string& sysfs_gid) {
  unsigned char raw[16];
  std::string hex;
  for (char c : sysfs_gid) {
    if (c != ':') hex += c;
  }
  if (hex.size() != 32) return sysfs_gid;
  for (int i = 0; i < 16; ++i)
    raw[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  char buf[INET6_ADDRSTRLEN] = {};
  return inet_ntop(AF_INET6, raw, buf, sizeof(buf)) ? buf : sysfs_gid;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: rdmanet-verbs-dump DEVICE\n";
    return 2;
  }
  rdmanet::IbvRdmaVerbs verbs;
  auto f = verbs.query(argv[1]);
  if (!f.ok()) {
    std::cerr << f.error().msg << "\n";
    return 1;
  }
  for (const auto& p : f->ports) {
    std::cout << "port " << p.num << " state " << p.state_num << "\n"
              << "port " << p.num << " active_mtu " << p.active_mtu << "\n"
              << "port " << p.num << " max_mtu " << p.max_mtu << "\n"
              << "port " << p.num << " link_layer " << p.link_layer << "\n"
              << "port " << p.num << " rate " << p.rate << "\n";
    for (const auto& g : p.gids) {
      std::cout << "gid " << p.num << " " << g.index << " " << compact(g.gid) << " "
                << rdmanet::gidTypeName(g.type) << " " << (g.ndev.empty() ? "-" : g.ndev) << "\n";
    }
  }
  return 0;
}
