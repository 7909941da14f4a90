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
set -euo pipefail

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
  rule "the core (deviceplugin/pools) reaches a front or the daemon" \
    '"deviceplugin/(v1beta1|dra|daemon)/' deviceplugin/pools
  rule "the v1beta1 front reaches the DRA front" '"deviceplugin/dra/' deviceplugin/v1beta1
  rule "the DRA front reaches the v1beta1 front" '"deviceplugin/v1beta1/' deviceplugin/dra
  return $bad
}

self_test() {
  local t
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  git -C "$t" init -q
  mkdir -p "$t"/{cni,common/net,common/base,deviceplugin/pools,deviceplugin/v1beta1,deviceplugin/dra}
  echo '#include "common/base/result.h"' >"$t/cni/a.cc"
  echo '#include <netlink/netlink.h>' >"$t/common/net/libnl_socket.h"
  echo '#include "deviceplugin/pools/pool.h"' >"$t/deviceplugin/v1beta1/ok.cc"
  if ! check "$t" 2>/dev/null; then
    echo "self-test: a clean tree was refused" >&2
    return 1
  fi
  local plant n=0 failed=0
  for plant in 'cni/x.cc:#include <grpcpp/grpcpp.h>' 'cni/y.h:#include "proto/api.pb.h"' \
    'common/base/x.cc:#include "cni/netconf.h"' 'common/base/y.cc:#include "deviceplugin/logging.h"' \
    'deviceplugin/pools/x.cc:#include <netlink/msg.h>' 'cni/z.cc:#include "tests/fakes/fake_kernel.h"' \
    'deviceplugin/pools/y.cc:#include "deviceplugin/daemon/daemon.h"' \
    'deviceplugin/v1beta1/x.cc:#include "deviceplugin/dra/dra_front.h"' \
    'deviceplugin/dra/x.cc:#include "deviceplugin/v1beta1/endpoint.h"'; do
    local f=${plant%%:*} line=${plant#*:}
    echo "$line" >"$t/$f"
    n=$((n + 1))
    if check "$t" 2>/dev/null; then
      echo "self-test: not caught: $f: $line" >&2
      failed=1
    fi
    rm "$t/$f"
  done
  ((failed == 0)) || return 1
  echo "layering self-test: $n planted violations, $n caught; a clean tree passes"
}

if [[ ${1:-} == --self-test ]]; then
  self_test
else
  repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
  check "$repo"
  echo "layering: OK"
fi
