#include "deviceplugin/doctor/host_seams.h"

#include "common/net/libnl_netlink.h"
#include "common/rdma/ibv_verbs.h"

namespace rdmanet::doctor {

HostSeams openHostSeams(std::ostream* err) {
  HostSeams s;
  if (auto nl = LibnlNetlink::open(); nl.ok()) {
    s.netlink = std::move(nl).value();
  } else if (err) {
    *err << "rdmanet-doctor: no netlink socket (" << nl.error().msg
         << "): DCB checks will be UNKNOWN\n";
  }
  if (auto p = EthtoolPauseReader::open(); p.ok()) {
    s.pause = std::move(p).value();
  } else if (err) {
    *err << "rdmanet-doctor: no ethtool netlink (" << p.error().msg
         << "): pause checks will be UNKNOWN\n";
  }
  // Opening nothing yet: a node without RDMA devices costs nothing, and each device that does
  // not open falls back to sysfs with the reason in its evidence.
  s.verbs = std::make_unique<IbvRdmaVerbs>();
  return s;
}

}  // namespace rdmanet::doctor
