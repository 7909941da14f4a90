#!/usr/bin/env bash
# Builds rdmanet's container image from this tree, with Debian's packages only (no registry):
#
#   hack/image.sh [--tag NAME:TAG] [--out FILE] [--rootfs DIR]
#
# 1. builds rdmanet, rdmanet-device-plugin and rdmanet-doctor (hack/build.sh, BUILD_DIR) unless
#    RDMANET_IMAGE_BINS names a directory holding the three already;
# 2. unpacks the Debian 12 packages that own the shared libraries the three binaries load (ldd ->
#    dpkg -S), with their dependencies, into a root filesystem: `mmdebstrap --variant=extract`
#    unpacks only those (no shell, no dpkg or apt, no maintainer scripts run), plus libibverbs'
#    providers (ibverbs-providers: mlx5, rxe, ...), which libibverbs dlopens rather than links,
#    and libcurl4, which the DRA front dlopens;
# 3. keeps only the shared libraries and the loader (documentation, locales, apt's and dpkg's
#    files go), adds the three binaries in /usr/local/bin, and checks that each one runs there
#    (chroot) and that no shell made it in;
# 4. writes an OCI image archive (one layer, entrypoint the device plugin, as the chart runs it)
#    and prints its path; when podman is installed, loads it as NAME:TAG (default
#    rdmanet:<the chart's appVersion>, the chart's default image).
#
# --rootfs DIR stops after step 3 with the filesystem in DIR (manifests/Dockerfile uses that, so
# both produce the same contents). Needs root (mmdebstrap --mode=root, chroot) and Debian's
# mirror (RDMANET_DEBIAN_MIRROR, default http://deb.debian.org/debian). Push the result with
#   podman push rdmanet:0.1.0 registry.example.com/rdmanet:0.1.0
#   skopeo copy oci-archive:build/image/rdmanet-0.1.0.oci.tar docker://registry.example.com/rdmanet:0.1.0
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
die() {
  echo "image: $*" >&2
  exit 1
}
# shellcheck source=hack/lib/oci.sh
. "$repo/hack/lib/oci.sh"

version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' manifests/helm/rdmanet/Chart.yaml)
tag=rdmanet:$version out='' rootfs_only=''
while (($#)); do
  case $1 in
    --tag) tag=${2:?--tag needs NAME:TAG} && shift 2 ;;
    --out) out=${2:?--out needs a file} && shift 2 ;;
    --rootfs) rootfs_only=${2:?--rootfs needs a directory} && shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" && exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[[ $(id -u) == 0 ]] || die "run as root (mmdebstrap --mode=root, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (hack/install-deps.sh)"
build_dir=${BUILD_DIR:-build}
[[ $build_dir = /* ]] || build_dir=$repo/$build_dir
out=${out:-$build_dir/image/rdmanet-$version.oci.tar}

# --- 1. the binaries ------------------------------------------------------------------------------
if [[ -n ${RDMANET_IMAGE_BINS:-} ]]; then
  bins=("$RDMANET_IMAGE_BINS"/rdmanet "$RDMANET_IMAGE_BINS"/rdmanet-device-plugin
    "$RDMANET_IMAGE_BINS"/rdmanet-doctor)
else
  [[ -f $build_dir/build.ninja ]] || BUILD_DIR=$build_dir hack/build.sh >&2
  cmake --build "$build_dir" -j"$(nproc)" --target rdmanet rdmanet-device-plugin rdmanet-doctor >&2
  bins=("$build_dir/cni/rdmanet" "$build_dir/deviceplugin/rdmanet-device-plugin"
    "$build_dir/deviceplugin/doctor/rdmanet-doctor")
fi
for b in "${bins[@]}"; do [[ -x $b ]] || die "$b is not built"; done

# --- 2. the packages that own their libraries -----------------------------------------------------
# (usrmerge: ldd may print /lib/... where dpkg recorded /usr/lib/..., or the other way.)
owner() {
  local f=$1 p o
  for p in "$f" "${f/#\/usr\/lib\//\/lib\/}" "${f/#\/lib\//\/usr\/lib\/}" "$(realpath "$f")"; do
    o=$(dpkg -S "$p" 2>/dev/null | grep -v '^diversion' | head -n1 | cut -d: -f1) || true
    [[ -n $o ]] && echo "$o" && return 0
  done
  die "no Debian package owns $f"
}
mapfile -t libs < <(for b in "${bins[@]}"; do
  ! ldd "$b" | grep -q 'not found' || die "unresolved libraries: $(ldd "$b" | grep 'not found')"
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
done | sort -u)
mapfile -t pkgs < <(for l in "${libs[@]}"; do owner "$l"; done | sort -u)
# libibverbs only Recommends its providers (the userspace half of each RDMA driver: mlx5, rxe,
# ...), and mmdebstrap's extract installs no Recommends. Without them libibverbs lists no device
# and every verbs query falls back to sysfs; librdmacm (the probe) needs the same providers.
if [[ " ${pkgs[*]} " == *" libibverbs1 "* ]]; then pkgs+=(ibverbs-providers); fi
# The DRA front dlopens libcurl (common/kube/curl_library.h), so ldd does not list it either.
pkgs+=(libcurl4)
echo "image: runtime packages: ${pkgs[*]}" >&2

work=$(mktemp -d /tmp/rdmanet-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mmdebstrap --quiet --variant=extract --mode=root --include="$(
  IFS=,
  echo "${pkgs[*]}"
)" bookworm "$root" "${RDMANET_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2 ||
  die "mmdebstrap failed"

# --- 3. only libraries, then the binaries -----------------------------------------------------------
# (libibverbs loads its providers, ibverbs-providers' lib*-rdmav34.so, from libibverbs/ as the
# /etc/libibverbs.d/*.driver entries name them.)
find "$root" -mindepth 1 -maxdepth 1 ! -name usr ! -name lib ! -name lib64 ! -name etc \
  -exec rm -rf {} +
find "$root/etc" -mindepth 1 -maxdepth 1 ! -name libibverbs.d -exec rm -rf {} +
find "$root/usr" -mindepth 1 -maxdepth 1 ! -name lib -exec rm -rf {} +
find "$root/usr/lib" -mindepth 1 -maxdepth 1 ! -name x86_64-linux-gnu -exec rm -rf {} +
find "$root/usr/lib/x86_64-linux-gnu" -mindepth 1 -maxdepth 1 ! -name '*.so*' ! -name libibverbs \
  -exec rm -rf {} +
mkdir -p "$root/usr/local/bin" "$root/tmp" "$root/etc" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
# Stripped: debug info (a RelWithDebInfo build) would be most of the image.
install -m 0755 -s "${bins[0]}" "$root/usr/local/bin/rdmanet"
install -m 0755 -s "${bins[1]}" "$root/usr/local/bin/rdmanet-device-plugin"
install -m 0755 -s "${bins[2]}" "$root/usr/local/bin/rdmanet-doctor"
for b in rdmanet-device-plugin rdmanet-doctor; do
  chroot "$root" "/usr/local/bin/$b" --help >/dev/null 2>&1 || die "$b does not run in the image"
done
CNI_COMMAND=VERSION chroot "$root" /usr/local/bin/rdmanet </dev/null >/dev/null ||
  die "rdmanet does not run in the image"
# The DRA front's libcurl, dlopened at run time: present, with every library it needs.
curl_libs=$(chroot "$root" /lib64/ld-linux-x86-64.so.2 --list /usr/lib/x86_64-linux-gnu/libcurl.so.4 \
  2>&1) || die "libcurl does not load in the image: $curl_libs"
! grep -q 'not found' <<<"$curl_libs" || die "libcurl's libraries missing: $curl_libs"
for sh in bin/sh bin/bash usr/bin/sh usr/bin/dpkg usr/bin/apt; do
  [[ ! -e $root/$sh ]] || die "the image holds /$sh"
done
if [[ -n $rootfs_only ]]; then
  rm -rf "$rootfs_only" && mkdir -p "$(dirname "$rootfs_only")" && mv "$root" "$rootfs_only"
  echo "$rootfs_only"
  exit 0
fi

# --- 4. the OCI archive ---------------------------------------------------------------------------
# One layer, reproducible (hack/lib/oci.sh); podman names the image by its ref.name: NAME:TAG.
archived=$(oci_archive "$root" "$out" --ref "$tag" --env PATH=/usr/local/bin --gzip 9 \
  --label org.opencontainers.image.title=rdmanet --label "org.opencontainers.image.version=$version" \
  --created-by hack/image.sh -- /usr/local/bin/rdmanet-device-plugin)
read -r manifest layer_size <<<"$archived"
echo "image: $(du -sh "$root" | cut -f1) unpacked, layer $((layer_size / 1024)) KiB compressed," \
  "manifest sha256:$manifest" >&2

if command -v podman >/dev/null; then
  # (podman names an OCI archive's image by its ref.name annotation: NAME:TAG.)
  id=$(podman load -q -i "$out" | sed -n 's/^Loaded image: *//p' | tail -n1)
  [[ -n $id ]] || die "podman load $out failed"
  echo "image: loaded into podman as $id" >&2
fi
echo "$out"
