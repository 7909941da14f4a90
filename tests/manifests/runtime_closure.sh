#!/usr/bin/env bash
# The container image's runtime stage, without a container engine: manifests/collect-runtime.sh
# lays out the same filesystem the Dockerfile's FROM-scratch stage gets, and the binaries run
# chrooted in it (so a missing shared library fails here, not on a node).
#
#   runtime_closure.sh closure     CNI_BINARY DEVICE_PLUGIN_BINARY BUILD_DIR
#   runtime_closure.sh install-cni CNI_BINARY DEVICE_PLUGIN_BINARY BUILD_DIR
#       the chart's init container command, run in that filesystem: copy-then-rename into
#       /host/cni/bin
source "$(dirname "$0")/lib.sh"
what=${1:?usage: runtime_closure.sh closure|install-cni CNI DP BUILD_DIR}
cni=${2:-}
dp=${3:-}
build=${4:-}
[[ $cni == - ]] && cni=  # CMake's placeholder for a target that does not exist
[[ $dp == - ]] && dp=
make_tmp

dockerfile=$repo/manifests/Dockerfile
# The Dockerfile names the binaries by their place in the build dir; CMake must agree.
for pair in "cni/rdmanet:$cni" "deviceplugin/rdmanet-device-plugin:$dp"; do
  rel=${pair%%:*}
  grep -q "/build/$rel" "$dockerfile" || die "the Dockerfile does not collect /build/$rel"
  if [[ -n ${pair#*:} && ${pair#*:} != "$build/$rel" ]]; then
    die "the built binary is ${pair#*:}, the Dockerfile expects <build>/$rel"
  fi
done
for f in hack/install-deps.sh hack/build.sh manifests/collect-runtime.sh; do
  [[ -x $repo/$f ]] || die "the Dockerfile runs $f, which is missing or not executable"
done
grep -q -- '--build' "$repo/hack/install-deps.sh" || die "install-deps.sh lacks the --build mode"

[[ -n $cni && -x $cni ]] || skip "the rdmanet CNI binary is not built (no CMake target yet)"
[[ -n $dp && -x $dp ]] || skip "rdmanet-device-plugin is not built (no CMake target yet)"
[[ $(id -u) == 0 ]] || skip "needs root (chroot)"

rootfs=$tmp/rootfs
"$repo/manifests/collect-runtime.sh" "$rootfs" "$cni" "$dp"

case $what in
  closure)
    # Nothing but the two binaries and shared objects (the loader included).
    while read -r f; do
      case $f in
        ./usr/local/bin/rdmanet | ./usr/local/bin/rdmanet-device-plugin) ;;
        *.so | *.so.*) ;;
        *) die "the runtime filesystem holds $f, which is neither a binary nor a library" ;;
      esac
    done < <(cd "$rootfs" && find . -type f)
    out=$(chroot "$rootfs" /usr/local/bin/rdmanet-device-plugin --help 2>&1) ||
      die "rdmanet-device-plugin --help fails in the runtime filesystem: $out"
    for f in --config --kubelet-dir --sysfs-root --devinfo-dir --cdi-dir --metrics-addr --log-level; do
      grep -q -- "$f" <<<"$out" || die "--help lacks $f, which the chart passes"
    done
    out=$(CNI_COMMAND=VERSION chroot "$rootfs" /usr/local/bin/rdmanet </dev/null 2>&1) ||
      die "rdmanet VERSION fails in the runtime filesystem: $out"
    grep -q '"1.1.0"' <<<"$out" || die "rdmanet VERSION does not list 1.1.0: $out"
    echo "PASS: both binaries run from a filesystem of $(cd "$rootfs" && find . -type f | wc -l) files" \
      "($(du -sh "$rootfs" | cut -f1))"
    ;;
  install-cni)
    require_tools
    grep -q -- '--install-cni' <<<"$("$dp" --help 2>&1)" ||
      skip "rdmanet-device-plugin has no --install-cni DIR yet (the chart's init container runs it)"
    # The command line the chart renders for the init container.
    cmd=$(node -e '
      const y=require("yaml");const docs=y.parseAllDocuments(require("fs").readFileSync(0,"utf8"));
      const ds=docs.map(d=>d.toJS()).find(d=>d&&d.kind==="DaemonSet");
      const c=ds.spec.template.spec.initContainers.find(c=>c.name==="install-cni");
      console.log([...c.command,...(c.args||[])].join("\n"))' < <("$helm" template rdmanet "$chart"))
    mapfile -t argv <<<"$cmd"
    dir=${argv[-1]}
    mkdir -p "$rootfs$dir"
    for round in first upgrade; do
      chroot "$rootfs" "${argv[@]}" || die "install-cni ($round) failed: ${argv[*]}"
      cmp "$rootfs$dir/rdmanet" "$cni" || die "installed rdmanet differs from the built one"
      [[ $(stat -c %a "$rootfs$dir/rdmanet") == 755 ]] || die "installed rdmanet is not 0755"
      left=$(find "$rootfs$dir" -mindepth 1 ! -name rdmanet)
      [[ -z $left ]] || die "install-cni left temporary files: $left"
    done
    echo "PASS: ${argv[*]} installs rdmanet (twice, in place)"
    ;;
  *) die "unknown subcommand $what" ;;
esac
