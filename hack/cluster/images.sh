#!/usr/bin/env bash
# Makes the cluster's own images and imports them into its containerd (no registry can be
# reached, and pods use imagePullPolicy: Never):
#   - the pause image: pause.c, built static, alone in the image;
#   - the test workload image: iproute2, the rdma-core tools (ibv_devices, rdma, perftest,
#     rping), Open MPI with UCX and busybox for a shell, unpacked from Debian's packages by
#     mmdebstrap; then what an MPI job's launcher needs to start its ranks through the API, as
#     the MPI operator's launcher does (no ssh, no keys): the cluster's own kubectl and kubexec,
#     Open MPI's remote shell agent; and allreduce_perf.cc, built with Debian's Open MPI.
# Both are cached in <cache>/images/, keyed by what they are made from.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=hack/lib/oci.sh
. "$repo/hack/lib/oci.sh"

mkdir -p "$cache_dir/images"

key=$(sha256sum "$cluster_dir/pause.c" "$repo/hack/lib/oci.sh" | sha256sum | cut -c1-16)
pause_tar=$cache_dir/images/pause-$key.oci.tar
if [[ ! -f $pause_tar ]]; then
  root=$(mktemp -d)
  gcc -static -Os -s -o "$root/pause" "$cluster_dir/pause.c"
  oci_archive "$root" "$pause_tar" --name "$pause_image" -- /pause >/dev/null
  rm -rf "$root"
fi

workload_pkgs=iproute2,ibverbs-utils,rdmacm-utils,perftest,busybox-static,ibverbs-providers
workload_pkgs+=,openmpi-bin,libucx0
kubectl=$(k8s_bin)/kubectl
key=$(echo "$workload_pkgs" | cat - "$repo/hack/lib/oci.sh" "$0" "$cluster_dir/allreduce_perf.cc" \
  "$kubectl" | sha256sum | cut -c1-16)
workload_tar=$cache_dir/images/workload-$key.oci.tar
if [[ ! -f $workload_tar ]]; then
  command -v mpicc >/dev/null || die "mpicc is missing: hack/install-deps.sh installs libopenmpi-dev"
  say "building the workload image from Debian's packages"
  rm -f "$cache_dir"/images/workload-*.oci.tar
  root=$(mktemp -d)
  mmdebstrap --quiet --variant=extract --include="$workload_pkgs" --mode=root bookworm "$root" \
    "${RDMANET_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
  # busybox's applets as links, since no maintainer script ran, in a dir of their own that comes
  # last on PATH: iproute2's ip, not busybox's.
  mkdir -p "$root/usr/local/busybox"
  chroot "$root" /bin/busybox --install -s /usr/local/busybox
  mkdir -p "$root/usr/local/bin"
  # Built here against the host's Open MPI (the same Debian release as the image's); without
  # Open MPI's C++ bindings, which the program does not use.
  read -ra mpi_cflags < <(mpicc --showme:compile)
  read -ra mpi_libs < <(mpicc --showme:link)
  g++ -std=c++17 -O2 -Wall -Wextra -Werror -DOMPI_SKIP_MPICXX=1 "${mpi_cflags[@]}" \
    -o "$root/usr/local/bin/allreduce_perf" "$cluster_dir/allreduce_perf.cc" "${mpi_libs[@]}"
  install -m 0755 "$kubectl" "$root/usr/local/bin/kubectl"
  # mpirun's plm_rsh_agent: mpirun runs `kubexec POD orted ARGS...` to start each node's daemon;
  # the pod's own namespace and service account (kubectl's in-cluster config).
  cat >"$root/usr/local/bin/kubexec" <<'SH'
#!/usr/local/busybox/sh
pod=$1
shift
exec kubectl exec "$pod" -- sh -c "$*"
SH
  chmod 0755 "$root/usr/local/bin/kubexec"
  rm -rf "$root"/usr/share/{doc,man,locale,info} "$root"/var/cache/apt "$root"/var/lib/apt/lists
  oci_archive "$root" "$workload_tar" --name "$workload_image" --env "$workload_path" \
    -- /usr/local/busybox/sh >/dev/null
  rm -rf "$root"
fi

# --local --index-name: the image gets exactly this name, whatever the archive's annotations say
# (through the transfer service, the default, the name is ignored).
import_image "$pause_image" "$pause_tar"
import_image "$workload_image" "$workload_tar"
