#!/usr/bin/env bash
# lint: the include rules that keep rdmanet's layers apart. Fails naming each offending line.
#
#   layering.sh [REPO]          check the tracked (and untracked, not ignored) files of REPO
#   layering.sh --self-test     plant one violation of each rule in a scratch tree and show
#                               that every rule fires (and that a clean tree passes)
#
# Rules (production code is cni/, common/, deviceplugin/, proto/):
#   1. cni/ never reaches gRPC or protobuf: the CNI binary is small and static.
#   2. common/ never reaches cni/ or deviceplugin/: it is what both binaries share.
#   3. <netlink/...> (libnl) appears only in common/net's libnl files (libnl_*, dcb_request.cc,
#      rdma_netlink.cc, link_monitor.cc, ethtool_pause.cc): everyone else goes through a seam.
#   4. production code never includes tests/.
#   5. the device plugin's core (deviceplugin/pools/) reaches neither front nor the daemon, and
#      no front reaches another: both fronts serve the same core.
#   6. arrows point down: the daemon drives the fronts through deviceplugin/front/ (the Front
#      contract, the kubelet-dir watcher), so neither front (v1beta1/, dra/ and below) nor
#      front/ itself includes deviceplugin/daemon/, and front/ includes no front.
#   7. DRA's two sides meet only in dra/ (the shared devices, the ClaimReader and
#      DevicePublisher seams, the DraFront that wires them): dra/kubelet/ and dra/apiserver/
#      never include each other, and neither includes the front (dra/dra_front.h) above them.
#   8. cni/ is in rooms on four floors, and each room includes only the rooms below it:
#        verbs     cni/*.cc, cni/*.h (plugin*, run, main): may include every room
#        modes/    the three modes, rollback, device return and recovery, PluginDeps
#        ipam/ pod/  delegated IPAM; the pod's netns, info and config (not each other)
#        state/    the attachment state, its store and the device locks
#        conf/     the netconf, the CNI environment, results, limits, the logger
#      So no room includes a verb, and a folder of cni/ that is none of these rooms is refused
#      until it is given its floor here.
#   9. common/base/ is common/'s ground floor (Result, Sysfs, Clock, Fd, addresses): it includes
#      nothing else of ours, so every other room of common/ may build on it.
set -euo pipefail
# shellcheck source=tests/lint/planted.sh
source "$(dirname "$0")/planted.sh"

check() {
  local repo=$1 bad=0
  # file:line:text of every #include in tracked and new files
  includes() {
    (cd "$repo" && git ls-files -co --exclude-standard -- "$@" 2>/dev/null) |
      grep -E '\.(cc|h)$' | while read -r f; do
        grep -nH -E '^[[:space:]]*#[[:space:]]*include' "$repo/$f" | sed "s#^$repo/##"
      done
  }
  rule() { # rule NAME PATTERN FILES...: every include line of FILES matching PATTERN is a violation
    local name=$1 pattern=$2 hits
    shift 2
    hits=$(includes "$@" | grep -E "$pattern" || true)
    if [[ -n $hits ]]; then
      printf 'layering: %s:\n%s\n' "$name" "$hits" >&2
      bad=1
    fi
  }
  rule "cni/ reaches gRPC or protobuf" '[<"](grpc|grpcpp|google/protobuf)/|[<"]proto/|\.pb\.h' cni
  rule "common/ reaches cni/ or deviceplugin/" '"(cni|deviceplugin)/' common
  local nl
  nl=$(includes cni common deviceplugin proto tests bench | grep -E '<netlink/' |
    grep -vE '^common/net/(libnl_[a-z_]+\.(cc|h)|dcb_request\.cc|rdma_netlink\.cc|link_monitor\.cc|ethtool_pause\.cc):' || true)
  if [[ -n $nl ]]; then
    printf 'layering: <netlink/...> outside common/net'"'"'s libnl files:\n%s\n' "$nl" >&2
    bad=1
  fi
  rule "production code includes tests/" '"tests/' cni common deviceplugin proto
  # Rule 9: every quoted include of common/base/ is common/base/.
  local up
  up=$(includes common/base | grep -E '#[[:space:]]*include[[:space:]]*"' |
    grep -vE '"common/base/' || true)
  if [[ -n $up ]]; then
    printf 'layering: common/base/ reaches above its floor (it may include common/base/ only):\n%s\n' \
      "$up" >&2
    bad=1
  fi
  rule "the core (deviceplugin/pools) reaches a front or the daemon" \
    '"deviceplugin/(v1beta1|dra|daemon|front)/' deviceplugin/pools
  rule "the v1beta1 front reaches the DRA front" '"deviceplugin/dra/' deviceplugin/v1beta1
  rule "the DRA front reaches the v1beta1 front" '"deviceplugin/v1beta1/' deviceplugin/dra
  rule "a front reaches the daemon (the Front contract is in deviceplugin/front/)" \
    '"deviceplugin/daemon/' deviceplugin/v1beta1 deviceplugin/dra deviceplugin/front
  rule "deviceplugin/front reaches a front" '"deviceplugin/(v1beta1|dra)/' deviceplugin/front
  rule "DRA's kubelet side reaches its API-server side" '"deviceplugin/dra/apiserver/' \
    deviceplugin/dra/kubelet
  rule "DRA's API-server side reaches its kubelet side" '"deviceplugin/dra/kubelet/' \
    deviceplugin/dra/apiserver
  rule "a side of DRA reaches the DraFront that wires it" '"deviceplugin/dra/dra_front\.h"' \
    deviceplugin/dra/kubelet deviceplugin/dra/apiserver
  # Rule 8: room ALLOWED-ROOMS (a regex of room names); any other "cni/..." include is a violation.
  croom() {
    local room=$1 allowed=$2 hits
    hits=$(includes "cni/$room" | grep -E '"cni/' | grep -vE "\"cni/($allowed)/" || true)
    if [[ -n $hits ]]; then
      printf 'layering: cni/%s/ reaches above its floor (it may include cni/{%s}/ only):\n%s\n' \
        "$room" "${allowed//|/,}" "$hits" >&2
      bad=1
    fi
  }
  croom conf 'conf'
  croom state 'conf|state'
  croom ipam 'conf|state|ipam'
  croom pod 'conf|state|pod'
  croom modes 'conf|state|ipam|pod|modes'
  local stray
  stray=$( (cd "$repo" && git ls-files -co --exclude-standard -- cni 2>/dev/null) |
    grep -E '^cni/[^/]+/.*\.(cc|h)$' | grep -vE '^cni/(conf|state|ipam|pod|modes)/' || true)
  if [[ -n $stray ]]; then
    printf 'layering: cni/ files in a folder that is no room (give it a floor in rule 8):\n%s\n' \
      "$stray" >&2
    bad=1
  fi
  return $bad
}

self_test() {
  local t
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  git -C "$t" init -q
  mkdir -p "$t"/{cni,common/net,common/base,deviceplugin/pools,deviceplugin/v1beta1} \
    "$t"/cni/{conf,state,ipam,pod,modes,extra} \
    "$t"/deviceplugin/{front,daemon,dra/kubelet,dra/apiserver}
  echo '#include "common/base/result.h"' >"$t/cni/a.cc"
  echo '#include <netlink/netlink.h>' >"$t/common/net/libnl_socket.h"
  echo '#include "common/base/fd.h"' >"$t/common/base/ok.cc"
  echo '#include "deviceplugin/pools/pool.h"' >"$t/deviceplugin/v1beta1/ok.cc"
  # The arrows that are allowed: down to front/, the daemon to a front, a side to dra/'s seams.
  echo '#include "deviceplugin/front/front.h"' >"$t/deviceplugin/dra/ok.h"
  echo '#include "deviceplugin/dra/dra_front.h"' >"$t/deviceplugin/daemon/ok.cc"
  echo '#include "deviceplugin/dra/device_publisher.h"' >"$t/deviceplugin/dra/apiserver/ok.h"
  echo '#include "deviceplugin/dra/claim_reader.h"' >"$t/deviceplugin/dra/kubelet/ok.h"
  # cni/'s arrows that are allowed: each room down to the floors below it, the verbs to all.
  echo '#include "cni/conf/env.h"' >"$t/cni/conf/ok.h"
  echo '#include "cni/conf/netconf.h"' >"$t/cni/state/ok.h"
  echo '#include "cni/state/state_store.h"' >"$t/cni/ipam/ok.h"
  echo '#include "cni/state/state_store.h"' >"$t/cni/pod/ok.h"
  printf '#include "cni/ipam/ipam.h"\n#include "cni/pod/pod_netns.h"\n' >"$t/cni/modes/ok.h"
  echo '#include "cni/modes/mode.h"' >"$t/cni/ok.cc"
  planted_all_caught layering check "$t" 'cni/x.cc:#include <grpcpp/grpcpp.h>' 'cni/y.h:#include "proto/api.pb.h"' \
    'common/base/x.cc:#include "cni/conf/netconf.h"' 'common/base/y.cc:#include "deviceplugin/logging.h"' \
    'common/base/z.cc:#include "common/os/read_file.h"' \
    'deviceplugin/pools/x.cc:#include <netlink/msg.h>' 'cni/z.cc:#include "tests/fakes/fake_kernel.h"' \
    'deviceplugin/pools/y.cc:#include "deviceplugin/daemon/daemon.h"' \
    'deviceplugin/v1beta1/x.cc:#include "deviceplugin/dra/dra_front.h"' \
    'deviceplugin/dra/x.cc:#include "deviceplugin/v1beta1/endpoint.h"' \
    'deviceplugin/pools/z.cc:#include "deviceplugin/front/front.h"' \
    'deviceplugin/v1beta1/y.h:#include "deviceplugin/daemon/front.h"' \
    'deviceplugin/dra/y.h:#include "deviceplugin/daemon/daemon.h"' \
    'deviceplugin/dra/kubelet/x.cc:#include "deviceplugin/daemon/flags.h"' \
    'deviceplugin/front/x.cc:#include "deviceplugin/daemon/daemon.h"' \
    'deviceplugin/front/y.h:#include "deviceplugin/v1beta1/endpoint.h"' \
    'deviceplugin/dra/kubelet/y.cc:#include "deviceplugin/dra/apiserver/slice_worker.h"' \
    'deviceplugin/dra/apiserver/x.h:#include "deviceplugin/dra/kubelet/prepare.h"' \
    'deviceplugin/dra/apiserver/y.h:#include "deviceplugin/dra/dra_front.h"' \
    'cni/conf/x.cc:#include "cni/state/state_store.h"' 'cni/conf/y.h:#include "cni/plugin.h"' \
    'cni/state/x.cc:#include "cni/modes/mode.h"' 'cni/state/y.h:#include "cni/ipam/ipam.h"' \
    'cni/ipam/x.cc:#include "cni/pod/pod_info.h"' 'cni/ipam/y.h:#include "cni/modes/mode.h"' \
    'cni/pod/x.cc:#include "cni/ipam/ipam.h"' 'cni/pod/y.h:#include "cni/plugin.h"' \
    'cni/modes/x.h:#include "cni/plugin.h"' 'cni/extra/x.cc:#include "cni/conf/env.h"'
}

if [[ ${1:-} == --self-test ]]; then
  self_test
else
  repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
  check "$repo"
  echo "layering: OK"
fi
