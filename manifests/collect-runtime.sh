#!/usr/bin/env bash
# Lays out the runtime image's whole filesystem: rdmanet's two binaries and exactly the shared
# libraries they load (as ldd resolves them, the dynamic loader included), nothing else.
#
#   manifests/collect-runtime.sh ROOTFS CNI_BINARY DEVICE_PLUGIN_BINARY
#
# Used by manifests/Dockerfile (its runtime stage is FROM scratch + ROOTFS) and by
# tests/manifests/runtime_closure.sh, which runs the binaries chrooted in ROOTFS.
set -euo pipefail
usage="usage: collect-runtime.sh ROOTFS CNI_BINARY DEVICE_PLUGIN_BINARY"
rootfs=${1:?$usage}
cni=${2:?$usage}
dp=${3:?$usage}

mkdir -p "$rootfs/usr/local/bin"
install -m 0755 "$cni" "$rootfs/usr/local/bin/rdmanet"
install -m 0755 "$dp" "$rootfs/usr/local/bin/rdmanet-device-plugin"
bins=("$cni" "$dp")

# ldd prints "libx.so.1 => /path (addr)" for libraries and "/lib64/ld-linux-x86-64.so.2 (addr)"
# for the loader; a "not found" is a broken closure and fails the image build.
for b in "${bins[@]}"; do
  if ldd "$b" | grep -q 'not found'; then
    ldd "$b" >&2
    echo "collect-runtime: unresolved libraries for $b" >&2
    exit 1
  fi
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
done | sort -u | while read -r lib; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
# The loader's canonical path, where the binaries' PT_INTERP points (usrmerge makes /lib64 a
# symlink on the build host; the scratch image needs it as a real path).
interp=$(readelf -l "${bins[0]}" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
if [[ -n $interp && ! -e $rootfs$interp ]]; then
  mkdir -p "$rootfs$(dirname "$interp")"
  cp -L "$interp" "$rootfs$interp"
fi
