#!/usr/bin/env bash
# ctest label `image`: builds the container image with hack/image.sh and runs it under podman
# the way the chart runs it. Every container's command, args, securityContext (user, dropped
# capabilities, read-only root, no privilege escalation), host network and volume mounts come
# from `helm template` (manifests/values/sriov.yaml) through podman_args.js, never from a copy:
#   1. the init container installs the CNI binary into a mounted directory;
#   2. the device-plugin container's binary checks the rendered ConfigMap (--check-config);
#   3. the device-plugin container runs against a simulated node's /sys mounted where the chart
#      mounts the host's, and registers with the stand-in kubelet through the mounted
#      device-plugins directory;
#   4. rdmanet-doctor --json runs as that container, /sys read-only;
#   5. libibverbs' providers are in the image, and libibverbs there loads them (step 5 says how,
#      with no RDMA device on the host).
# A missing library, a wrong path or a capability the binaries need but the chart drops fails it.
#
#   image_test.sh CNI DEVICE_PLUGIN DOCTOR FAKE_KUBELET SIMNODE
source "$(dirname "$0")/../manifests/lib.sh"
require_tools
[[ $(id -u) == 0 ]] || skip "needs root (mmdebstrap, podman)"
for t in podman runc mmdebstrap; do
  command -v "$t" >/dev/null || die "$t is missing (hack/install-deps.sh installs it)"
done
make_tmp
bins=$tmp/bins
mkdir -p "$bins"
for i in 1 2 3; do ln -s "$(readlink -f "${!i}")" "$bins/$(basename "${!i}")"; done
kubelet_bin=$(readlink -f "${4:?fake kubelet}")
simnode_bin=$(readlink -f "${5:?simnode}")
SECONDS=0
exec 3>&1

# --- the image ------------------------------------------------------------------------------------
name=localhost/rdmanet-image-test tag=t$$
archive=$(RDMANET_IMAGE_BINS=$bins "$repo/hack/image.sh" --tag "$name:$tag" \
  --out "$tmp/rdmanet.oci.tar" 2>"$tmp/image.log") || die "hack/image.sh failed: $(tail -n 5 "$tmp/image.log")"
[[ $archive == "$tmp/rdmanet.oci.tar" && -s $archive ]] || die "hack/image.sh printed '$archive'"
cleanup_image() { podman rmi -f "$name:$tag" >/dev/null 2>&1 || true; }
trap 'cleanup_image; rm -rf "$tmp"' EXIT
size=$(podman image inspect "$name:$tag" --format '{{.Size}}')
echo "image $name:$tag: $((size / 1000000)) MB unpacked ($((size)) bytes), archive $(du -h "$archive" | cut -f1) [${SECONDS}s]"
grep '^image: runtime packages' "$tmp/image.log"
# Its filesystem: the three binaries, shared libraries, libibverbs' provider list; nothing else.
cid=$(podman create "$name:$tag")
podman export "$cid" | tar -t >"$tmp/files.txt"
podman rm "$cid" >/dev/null
extra=$(grep -vE '/$|^usr/local/bin/rdmanet(-device-plugin|-doctor)?$|\.so(\.[0-9.]+)?$|^etc/libibverbs\.d/' "$tmp/files.txt" || true)
[[ -z $extra ]] || die "the image holds more than binaries and libraries: $(head -n 5 <<<"$extra")"
files=$(podman run --runtime runc --cgroup-manager cgroupfs --rm --ulimit nofile=20000:20000 \
  --ulimit nproc=4096:4096 --entrypoint /usr/local/bin/rdmanet-device-plugin "$name:$tag" --help 2>&1) ||
  die "the image's entrypoint binary does not run: $files"

# --- the chart's containers -----------------------------------------------------------------------
port=$((20000 + $$ % 20000))
render "$tmp/r.yaml" -f "$values_dir/sriov.yaml" --set "image.repository=$name" \
  --set "image.tag=$tag" --set "devicePlugin.metricsPort=$port"
node -e 'const {parseDocs}=require(process.argv[1]);const fs=require("fs");
  const cm=parseDocs(fs.readFileSync(process.argv[2],"utf8"),"r").find((d)=>d.kind==="ConfigMap");
  fs.writeFileSync(process.argv[3], cm.data["config.json"])' \
  "$tests_dir/k8s_check.js" "$tmp/r.yaml" "$tmp/config.json.in"
mkdir -p "$tmp/config" "$tmp/cni-bin" "$tmp/devinfo" "$tmp/cdi" "$tmp/cni-state" \
  "$tmp/kubelet/device-plugins" "$tmp/kubelet/pod-resources"
mv "$tmp/config.json.in" "$tmp/config/config.json"
"$simnode_bin" up --tree-only --root "$tmp/node" >/dev/null || die "simnode up --tree-only failed"
vols=(--volume "cni-bin=$tmp/cni-bin" --volume "config=$tmp/config"
  --volume "device-plugins=$tmp/kubelet/device-plugins" --volume "sys=$tmp/node/sys"
  --volume "devinfo=$tmp/devinfo" --volume "cdi=$tmp/cdi" --volume "cni-state=$tmp/cni-state"
  --volume "pod-resources=$tmp/kubelet/pod-resources")
podman_run() { # CONTAINER [podman_args.js options]... -- [podman run options]...
  local c=$1 a=() pre=()
  shift
  while (($#)) && [[ $1 != -- ]]; do a+=("$1") && shift; done
  (($#)) && shift && pre=("$@")
  mapfile -t args < <(node "$(dirname "$0")/podman_args.js" "$tmp/r.yaml" "$c" "${vols[@]}" "${a[@]}") ||
    die "podman_args.js $c failed"
  echo "+ podman run ${pre[*]} ${args[*]}" >&3 # the exact run, even when its output is captured
  podman --runtime runc --cgroup-manager cgroupfs run --ulimit nofile=20000:20000 \
    --ulimit nproc=4096:4096 "${pre[@]}" "${args[@]}"
}

# 1. install-cni, twice (a node's upgrade replaces the binary in place)
for round in first again; do
  out=$(podman_run install-cni -- --rm 2>&1) || die "the init container failed ($round): $out"
done
strip -o "$tmp/rdmanet.stripped" "$bins/rdmanet" # the image holds the binaries stripped
cmp "$tmp/cni-bin/rdmanet" "$tmp/rdmanet.stripped" || die "the installed CNI binary differs from the built one"
[[ -x $tmp/cni-bin/rdmanet ]] || die "the installed CNI binary is not executable"
[[ -z $(find "$tmp/cni-bin" -name '.*') ]] || die "install-cni left a temp file: $(ls -A "$tmp/cni-bin")"
out=$(CNI_COMMAND=VERSION "$tmp/cni-bin/rdmanet" </dev/null) || die "the installed CNI does not run"
echo "PASS: init container installed the CNI ($(stat -c '%a %U' "$tmp/cni-bin/rdmanet")) [${SECONDS}s]"

# 2. --check-config on the rendered ConfigMap
out=$(podman_run device-plugin --check-config -- --rm 2>&1) || die "--check-config refused the rendered config: $out"
grep -q 'rdma/vf' <<<"$out" || die "--check-config does not list rdma/vf: $out"
echo "PASS: --check-config accepts the rendered ConfigMap: $(tr '\n' ' ' <<<"$out" | cut -c 1-160)"

# 3. the daemon against the simulated node, registering with the stand-in kubelet
DEMO_WORK=$tmp
# shellcheck source=hack/demo/kubelet.sh
source "$repo/hack/demo/kubelet.sh"
kubelet_start "$kubelet_bin" "$tmp/kubelet"
cname=rdmanet-image-test-$$
trap 'kubelet_stop; podman rm -f "$cname" >/dev/null 2>&1; cleanup_image; rm -rf "$tmp"' EXIT
podman_run device-plugin -- -d --name "$cname" >/dev/null || die "the device-plugin container did not start"
if ! KUBELET_TIMEOUT=90 kubelet wait rdma/vf 90000; then
  podman logs "$cname" 2>&1 | tail -n 20
  die "the containerized daemon did not register rdma/vf with the stand-in kubelet"
fi
reg=$(kubelet_last register)
devs=$(kubelet_last devices rdma/vf | jq '.count')
((devs > 0)) || die "the daemon lists no devices of the simulated node: $(kubelet_last devices rdma/vf)"
state=$(podman inspect "$cname" --format '{{.State.Status}}')
[[ $state == running ]] || die "the daemon container is $state"
ready=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz" 2>/dev/null || true)
echo "PASS: the daemon registered ($(jq -c '{resource, endpoint, version}' <<<"$reg")), $devs devices" \
  "listed; /healthz $ready [${SECONDS}s]"
podman logs "$cname" 2>&1 | grep -E ' [IW] ' | head -n 4 | cut -c 1-160
podman rm -f "$cname" >/dev/null

# 4. the doctor, as the device-plugin container, /sys read-only
out=$(podman_run device-plugin --command '["/usr/local/bin/rdmanet-doctor","--json","--sysfs-root","/host"]' \
  -- --rm 2>"$tmp/doctor.err") || true
jq -e '.checks | length > 0' <<<"$out" >/dev/null ||
  die "rdmanet-doctor --json gave no checks: $(head -c 300 <<<"$out") $(tail -n 3 "$tmp/doctor.err")"
echo "PASS: rdmanet-doctor --json with /sys read-only: $(jq -c '[.checks[].verdict] | group_by(.) | map({(.[0]): length}) | add' <<<"$out")"

# 5. libibverbs' providers (ibverbs-providers, hack/image.sh): the files, then libibverbs in the
#    image loading them. This host has no RDMA device, so the simulated node stands in for the
#    kernel: its tree, mounted over the container's /sys, lists uverbs devices (plus two files the
#    kernel has and the simulator does not write: each uverbs device's abi_version, each PCI
#    function's modalias), and a character node per device carries the numbers its sysfs "dev"
#    names. libibverbs reads /etc/libibverbs.d, dlopens the providers, and mlx5's claims the
#    ConnectX functions by modalias; opening one then fails, as no kernel driver is behind the
#    node. So the doctor's verbs evidence names ibv_open_device where, with the driver entries
#    hidden (the control), libibverbs lists no device.
for f in usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so \
  usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so etc/libibverbs.d/mlx5.driver \
  etc/libibverbs.d/rxe.driver; do
  grep -qx "$f" "$tmp/files.txt" || die "the image lacks /$f"
done
echo "PASS: the image holds libibverbs' providers: $(grep -c 'libibverbs/lib.*-rdmav[0-9]*\.so$' "$tmp/files.txt")" \
  "provider libraries, $(grep -c '^etc/libibverbs\.d/.*\.driver$' "$tmp/files.txt") driver entries (mlx5, rxe among them)"
devs=()
mkdir -p "$tmp/uverbs" "$tmp/no-drivers"
for u in "$tmp"/node/sys/class/infiniband_verbs/uverbs*; do
  echo 1 >"$u/abi_version"
  fn=$(readlink -f "$tmp/node/sys/class/infiniband/$(<"$u/ibdev")/device")
  c=$(<"$fn/class")
  printf 'pci:v%08Xd%08Xsv00000000sd00000000bc%02Xsc%02Xi%02X\n' "$(<"$fn/vendor")" \
    "$(<"$fn/device")" $((c >> 16)) $(((c >> 8) & 255)) $((c & 255)) >"$fn/modalias"
  IFS=: read -r major minor <"$u/dev"
  mknod "$tmp/uverbs/${u##*/}" c "$major" "$minor"
  devs+=(--device "$tmp/uverbs/${u##*/}:/dev/infiniband/${u##*/}")
done
((${#devs[@]} > 0)) || die "the simulated node lists no uverbs devices"
# Over the container's own sysfs, subtree by subtree (runc mounts cgroups under /sys/fs).
sysmounts=()
for d in "$tmp"/node/sys/*/; do
  d=${d%/}
  sysmounts+=(--volume "$d:/sys/${d##*/}:ro")
done
verbs_doctor() { # OUT [podman run options]: rdmanet-doctor --json on the simulated node as /sys
  local out=$1
  shift
  podman --runtime runc --cgroup-manager cgroupfs run --rm --network none \
    --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 "${sysmounts[@]}" "${devs[@]}" --env IBV_SHOW_WARNINGS=1 "$@" --entrypoint /usr/local/bin/rdmanet-doctor \
    "$name:$tag" --json >"$out" 2>"$out.err" || true
  jq -r '.checks[] | select(.check == "rdma_port" and .device == "mlx5_0/1") | .evidence.source' "$out"
}
src=$(verbs_doctor "$tmp/verbs.json")
echo "  mlx5_0/1 source: $src"
[[ $src == "sysfs (verbs: ibv_open_device(mlx5_0): "* ]] ||
  die "libibverbs in the image did not list mlx5_0: source '$src'; $(head -n 3 "$tmp/verbs.json.err")"
! grep -q 'no userspace device-specific driver\|couldn.t load driver' "$tmp/verbs.json.err" ||
  die "libibverbs warned: $(grep -m 2 'driver' "$tmp/verbs.json.err")"
src=$(verbs_doctor "$tmp/control.json" --volume "$tmp/no-drivers:/etc/libibverbs.d:ro")
echo "  mlx5_0/1 source without driver entries: $src"
[[ $src == "sysfs (verbs: no device mlx5_0 (not listed by libibverbs))" ]] ||
  die "the control (no driver entries) still listed mlx5_0: source '$src'"
grep -q 'no userspace device-specific driver found for' "$tmp/control.json.err" ||
  die "the control gave no libibverbs warning: $(head -n 3 "$tmp/control.json.err")"
echo "PASS: libibverbs in the image loads the mlx5 provider from /etc/libibverbs.d: mlx5_0 is" \
  "listed (ibv_open_device then fails: no kernel device), and no 'no userspace driver' warning" \
  "for any of the $((${#devs[@]} / 2)) uverbs devices; without the driver entries mlx5_0 is not" \
  "listed ($(grep -c 'no userspace device-specific' "$tmp/control.json.err") such warnings)"
echo "PASS: image $name:$tag, $((size / 1000000)) MB [${SECONDS}s]"
