#!/usr/bin/env bash
# Prepares the VM harness's boot assets, idempotently, and prints the asset directory on stdout.
#
#   hack/vm/prepare.sh            -> /var/cache/rdmanet-vm/<kernel release>
#
# The kernel is Debian's stock one: the version that linux-image-amd64 currently depends on,
# resolved at run time because Debian drops old kernel builds from its mirror (never pin it).
# The package is downloaded (not installed: the host's boot setup stays untouched) and unpacked
# into a cache outside the checkout:
#   <dir>/vmlinux                      uncompressed kernel: booting it skips ~3 s of decompression
#   <dir>/modules/lib/modules/<kver>/  the module tree, indexed with busybox depmod (the host has
#                                      no kmod); the guest mounts it over its /lib/modules
#   <dir>/initramfs-<hash>.cpio.gz     busybox + the 9p/virtio/overlay modules + hack/vm/initramfs-init
# A second caller waits on a lock, then finds everything done. When the mirror cannot be reached,
# the newest complete cached kernel is used.
#
# Environment: RDMANET_VM_CACHE (cache root; default /var/cache/rdmanet-vm as root, else
# ${XDG_CACHE_HOME:-~/.cache}/rdmanet-vm), RDMANET_VM_KERNEL (a kernel release to use as is).
# Exit codes: 0 ok, 1 failure (message on stderr).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "vm-prepare: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

if [[ -z ${RDMANET_VM_CACHE:-} ]]; then
  if [[ $(id -u) == 0 ]]; then
    RDMANET_VM_CACHE=/var/cache/rdmanet-vm
  else
    RDMANET_VM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/rdmanet-vm
  fi
fi
cache=$RDMANET_VM_CACHE
mkdir -p "$cache"
busybox=/bin/busybox
[[ -x $busybox ]] || die "$busybox missing (apt-get install busybox-static)"

# Modules the initramfs loads itself; everything else the guest loads from the 9p-mounted tree.
initramfs_modules=(virtio_pci 9pnet_virtio 9p overlay)

# --- kernel version -----------------------------------------------------------------------------
# Prints the package name linux-image-amd64 depends on, e.g. linux-image-6.1.0-57-amd64.
# apt-cache takes over a second, so the answer is remembered until apt's lists change (apt-get
# update renames files into the lists directory, which updates its mtime).
kernel_package() {
  local memo=$cache/.resolved lists=/var/lib/apt/lists pkg
  if [[ -s $memo && $memo -nt $lists ]]; then
    cat "$memo"
    return
  fi
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
  if [[ -n $pkg ]]; then echo "$pkg" >"$memo"; fi
  echo "$pkg"
}

apt_refresh() {
  [[ $(id -u) == 0 ]] || return 1
  log "apt-get update"
  apt-get update -qq >/dev/null 2>&1
}

newest_cached() {
  local d
  for d in "$cache"/*/; do
    if [[ -f $d/.complete ]]; then basename "$d"; fi
  done | sort -V | tail -n1
}

# Temporary directories live inside the cache (same filesystem, so results are moved in
# atomically) and are removed on any exit.
tmps=()
trap 'rm -rf "${tmps[@]}"' EXIT
new_tmp() { # sets $tmp (not a subshell, so the EXIT trap sees it)
  tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
  tmps+=("$tmp")
}

# --- kernel assets --------------------------------------------------------------------------------
# Finds the compressed payload inside a bzImage by its magic and decompresses it: the technique
# of the kernel's scripts/extract-vmlinux, in a few lines. Each candidate offset is tried until
# the output is an ELF file.
extract_vmlinux() {
  local in=$1 out=$2 magic tool off
  local -a formats=(
    '\xfd7zXZ\x00|xz -dc'
    '\x1f\x8b\x08|gzip -dc'
    '\x28\xb5\x2f\xfd|zstd -dc'
    '\x02\x21\x4c\x18|lz4 -dc'
    'BZh|bzip2 -dc'
    '\x5d\x00\x00\x00|xz -F lzma -dc'
  )
  local f
  for f in "${formats[@]}"; do
    magic=${f%%|*}
    tool=${f#*|}
    command -v "${tool%% *}" >/dev/null || continue
    # shellcheck disable=SC2013 # byte offsets, one number each
    for off in $(LC_ALL=C grep -aboUP "$magic" "$in" | cut -d: -f1); do
      tail -c +$((off + 1)) "$in" | $tool >"$out" 2>/dev/null || true
      if [[ $(head -c4 "$out" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]; then
        return 0
      fi
    done
  done
  rm -f "$out"
  return 1
}

fetch_kernel() {
  local pkg=$1 kver=$2 dir=$cache/$2 tmp
  new_tmp
  log "downloading $pkg"
  # (apt warns that root downloads unsandboxed: harmless, so stderr is shown only on failure.)
  if ! (cd "$tmp" && apt-get download -qq "$pkg" >"$tmp/apt.log" 2>&1); then
    log "apt-get download $pkg failed: $(tail -n3 "$tmp/apt.log")"
    return 1
  fi
  log "unpacking $pkg"
  dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/root"
  [[ -d $tmp/root/lib/modules/$kver ]] || die "$pkg has no /lib/modules/$kver"
  extract_vmlinux "$tmp/root/boot/vmlinuz-$kver" "$tmp/vmlinux" ||
    die "cannot extract vmlinux from vmlinuz-$kver"
  mkdir -p "$tmp/out/modules/lib/modules"
  mv "$tmp/root/lib/modules/$kver" "$tmp/out/modules/lib/modules/"
  mv "$tmp/vmlinux" "$tmp/out/vmlinux"
  cp "$tmp/root/boot/config-$kver" "$tmp/out/config"
  log "indexing modules"
  "$busybox" depmod -b "$tmp/out/modules" "$kver"
  touch "$tmp/out/.complete"
  rm -rf "$dir"
  mv "$tmp/out" "$dir"
}

# Prints the module files (relative to the module dir) that $@ need, dependencies first.
module_closure() {
  local moddir=$1
  shift
  awk -v want="$*" '
    BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) { gsub("-", "_", w[i]); need[w[i]] = 1 } }
    {
      sub(":", "", $1)
      name = $1; sub(".*/", "", name); sub("\\.ko.*", "", name); gsub("-", "_", name)
      if (name in need) { for (i = NF; i >= 2; i--) print $i; print $1 }
    }' "$moddir/modules.dep" | awk '!seen[$0]++'
}

build_initramfs() {
  local kver=$1 dir=$cache/$1 hash out tmp m
  local moddir=$dir/modules/lib/modules/$kver
  hash=$(cat "$here/initramfs-init" "$busybox" | sha256sum | cut -c1-12)
  out=$dir/initramfs-$hash.cpio.gz
  if [[ -f $out ]]; then
    echo "$out"
    return 0
  fi
  log "building initramfs"
  new_tmp
  mkdir -p "$tmp/root/bin" "$tmp/root/lib/modules/$kver" "$tmp/root"/{dev,proc,sys,newroot,lower,rw}
  cp "$busybox" "$tmp/root/bin/busybox"
  ln -s busybox "$tmp/root/bin/sh"
  cp "$here/initramfs-init" "$tmp/root/init"
  chmod 0755 "$tmp/root/init"
  local files
  files=$(module_closure "$moddir" "${initramfs_modules[@]}")
  [[ -n $files ]] || die "no initramfs modules found in $moddir"
  for m in $files; do
    mkdir -p "$tmp/root/lib/modules/$kver/$(dirname "$m")"
    cp "$moddir/$m" "$tmp/root/lib/modules/$kver/$m"
  done
  "$busybox" depmod -b "$tmp/root" "$kver"
  (cd "$tmp/root" && find . | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -1 >"$tmp/initramfs"
  rm -f "$dir"/initramfs-*.cpio.gz
  mv "$tmp/initramfs" "$out"
  echo "$out"
}

# --- main -----------------------------------------------------------------------------------------
exec 9>"$cache/.lock"
flock 9
# Leftovers of a preparation that was killed; nobody else can be using them while we hold the lock.
rm -rf "$cache"/.tmp.*

kver=${RDMANET_VM_KERNEL:-}
if [[ -z $kver ]]; then
  pkg=$(kernel_package)
  if [[ -z $pkg ]] && apt_refresh; then pkg=$(kernel_package); fi
  if [[ -n $pkg ]]; then
    kver=${pkg#linux-image-}
    if [[ ! -f $cache/$kver/.complete ]]; then
      start=$SECONDS
      if ! fetch_kernel "$pkg" "$kver"; then
        # The lists may name a build the mirror has dropped: refresh once and resolve again.
        rm -f "$cache/.resolved"
        if apt_refresh && pkg=$(kernel_package) && [[ -n $pkg ]]; then
          kver=${pkg#linux-image-}
          [[ -f $cache/$kver/.complete ]] || fetch_kernel "$pkg" "$kver" || kver=
        else
          kver=
        fi
      fi
      [[ -n $kver ]] && log "kernel $kver ready in $((SECONDS - start)) s"
    fi
  fi
  if [[ -z $kver ]]; then
    kver=$(newest_cached)
    [[ -n $kver ]] || die "cannot resolve or download linux-image-amd64 and nothing is cached"
    log "warning: kernel download failed; using cached $kver"
  fi
fi
[[ -f $cache/$kver/.complete ]] || die "kernel $kver is not in $cache"
build_initramfs "$kver" >/dev/null
echo "$cache/$kver"
