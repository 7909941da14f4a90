#!/usr/bin/env bash
# Builds the upstream components that are missing from the cache, from their Go modules.
#
#   hack/cluster/build.sh [COMPONENT...]     default: every component the cluster runs, with the
#                                            Kubernetes version of $K8S_VERSION or the default
#
# Each lands in <cache>/<component>-<version>/bin/ (cache: $RDMANET_CLUSTER_CACHE, default
# /var/cache/rdmanet-cluster), built in a copy of hack/cluster/gomod/<component>-<version>/ with
# -mod=readonly, so every module is checked against the committed go.sum. A `recipe` file beside
# bin/ holds the hash of go.mod, go.sum and the build flags: a cache entry is reused only when it
# matches, and `seconds` records how long the cold build took.
#
# Builds are niced (and so is their session's autogroup, below) and run at most $GO_BUILD_P
# (default 2) compiles at once: the machine has two cores that other builds share. Everything is
# static (CGO_ENABLED=0).
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

[[ -x $go_bin ]] || die "Go is missing: $go_bin (set GO)"
# Started in a session of its own (hack/test.sh: setsid, so that it can be stopped whole), the
# build is its own autogroup when the kernel groups by session (sched_autogroup_enabled, on in
# Debian's kernels): groups share the CPU equally, and the nice below then ranks its compiles
# only against each other. Measured so: the Go compiles took half of both cores from rdmanet's
# build. The group's own nice (sched(7), /proc/PID/autogroup) makes it take what the rest leave.
if [[ $(ps -o sid= -p $$ | tr -d ' ') == "$$" && -w /proc/$$/autogroup ]]; then
  echo 19 >"/proc/$$/autogroup" || true
fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

# ldflags COMPONENT VERSION: what the upstream release builds stamp into the binaries. The
# Kubernetes version matters beyond display: kubectl's skew warning, the node's kubeletVersion.
ldflags() {
  local flags="-s -w" p minor
  case $1 in
    kubernetes)
      minor=${2#v1.} && minor=${minor%%.*}
      for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags+=" -X $p.gitVersion=$2 -X $p.gitMajor=1 -X $p.gitMinor=$minor"
        flags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
      done
      ;;
    containerd) flags+=" -X github.com/containerd/containerd/v2/version.Version=$2" ;;
    cni-plugins)
      flags+=" -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$2"
      ;;
  esac
  echo "$flags"
}

# A build stopped half-way (a failure, or SIGTERM from hack/test.sh) leaves no work dir.
unfinished=
trap '[[ -z $unfinished ]] || rm -rf "$unfinished"' EXIT
trap 'exit 143' TERM INT

# build COMPONENT [VERSION]: prints the bin dir, building it first when the cache lacks it.
build() {
  local comp=$1 ver mod sum pkgs src dest recipe flags start
  read -r ver mod sum pkgs < <(versions_line "$comp" "${2:-}") || die "$comp ${2:-} is not in versions"
  src=$cluster_dir/gomod/$comp-$ver
  dest=$cache_dir/$comp-$ver
  [[ -f $src/go.mod && -f $src/go.sum ]] || die "$src is missing: run hack/cluster/gomod.sh $comp $ver"
  # The versions file pins the module's sum; go.sum must agree, and go checks go.sum on download.
  grep -qxF "$mod $ver $sum" "$src/go.sum" || die "$src/go.sum does not carry $mod $ver $sum"
  flags=$(ldflags "$comp" "$ver")
  recipe=$(cat "$src/go.mod" "$src/go.sum" <(echo "$flags $pkgs") | sha256sum | cut -c1-64)
  mkdir -p "$cache_dir"
  exec {lock}>"$cache_dir/.$comp-$ver.lock"
  # Two runs building the same entry at once: the second waits and then finds it built.
  flock "$lock"
  if [[ $(cat "$dest/recipe" 2>/dev/null) != "$recipe" ]]; then
    say "building $comp $ver (cold builds take minutes; Kubernetes tens of minutes)"
    local work targets=() rel p
    work=$(mktemp -d "$cache_dir/.build-$comp-$ver.XXXXXX")
    unfinished=$work
    cp "$src/go.mod" "$src/go.sum" "$work/"
    mkdir "$work/bin"
    IFS=, read -ra rel <<<"$pkgs"
    for p in "${rel[@]}"; do
      if [[ $p == . ]]; then targets+=("$mod"); else targets+=("$mod/$p"); fi
    done
    start=$(date +%s)
    if [[ $comp == etcd ]]; then
      # The package is the module root, whose default binary name would be "server".
      (cd "$work" && nice -n 10 "$go_bin" build -p "${GO_BUILD_P:-2}" -trimpath \
        -ldflags "$flags" -o bin/etcd "${targets[@]}") || die "building $comp $ver failed"
    else
      (cd "$work" && nice -n 10 "$go_bin" build -p "${GO_BUILD_P:-2}" -trimpath \
        -ldflags "$flags" -o bin/ "${targets[@]}") || die "building $comp $ver failed"
    fi
    if [[ $comp == multus ]]; then
      # Its RBAC and NetworkAttachmentDefinition CRD, applied by multus.sh as upstream ships them.
      cp "$(cd "$work" && "$go_bin" list -m -f '{{.Dir}}' "$mod")/deployments/multus-daemonset-thick.yml" \
        "$work/"
    fi
    echo $(($(date +%s) - start)) >"$work/seconds"
    echo "$recipe" >"$work/recipe"
    rm -f "$work/go.mod" "$work/go.sum"
    rm -rf "$dest"
    mv "$work" "$dest"
    unfinished=
    say "built $comp $ver in $(cat "$dest/seconds") s"
  fi
  exec {lock}>&-
  echo "$dest/bin"
}

if (($#)); then
  for c in "$@"; do
    if [[ $c == kubernetes ]]; then build kubernetes "$(k8s_version)"; else build "$c"; fi
  done
else
  build kubernetes "$(k8s_version)"
  for c in etcd containerd cni-plugins multus cri-tools; do build "$c"; done
fi
