#pragma once
// LldpSocket: receives the LLDP frames that arrive on a set of netdevs of the calling thread's
// network namespace: one AF_PACKET socket for the LLDP ethertype, which joins the LLDP group
// address (lldp_frame.h) on each netdev listened on, so a NIC that filters multicast passes the
// frames up. Receive only: it never sends. Opening needs CAP_NET_RAW (error 101, EPERM).
//
// The memberships belong to the socket: closing it (a daemon that dies) leaves nothing behind.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/base/fd.h"
#include "common/base/result.h"
#include "common/net/lldp_frame.h"

namespace rdmanet {

struct LldpReceived {
  std::string netdev{};
  Result<LldpNeighbor> neighbor = makeError(ErrorCode::kDecodeFailure, "empty");
};

class LldpSocket {
 public:
  static Result<LldpSocket> open();

  int fd() const { return fd_.get(); }

  // Listens on exactly these netdevs: joins the group on the new ones (and on one whose ifindex
  // changed: the same name made again), leaves it on the others. A netdev that is gone is
  // skipped, and listened on once a later call finds it. Returns the netdevs it could not join
  // on, with why, for the caller to log.
  std::map<std::string, std::string> listen(const std::set<std::string>& netdevs);

  // The frames received since the last call, parsed, in arrival order; never blocks. Frames the
  // node sent itself, and frames on netdevs not listened on, are skipped.
  std::vector<LldpReceived> drain();

 private:
  explicit LldpSocket(Fd fd) : fd_(std::move(fd)) {}

  Fd fd_;
  std::map<std::string, int> joined_;  // netdev -> its ifindex when joined
};

}  // namespace rdmanet
