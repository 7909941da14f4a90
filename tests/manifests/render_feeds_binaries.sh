#!/usr/bin/env bash
# The chart's output fed to the real binaries:
#
#   render_feeds_binaries.sh dp  DEVICE_PLUGIN_BINARY   each render's container args and ConfigMap
#                                                       config.json must pass
#                                                       `rdmanet-device-plugin ARGS --check-config`
#   render_feeds_binaries.sh cni CNI_BINARY             each rendered NAD netconf does a real
#                                                       ADD/DEL on the simulated node (root)
#
# CMake passes "-" as the binary while its target does not exist; the test then skips (77)
# with the reason, as it does when the binary lacks the mode it needs. Everything else failing
# is a failure.
source "$(dirname "$0")/lib.sh"
simnode=${RDMANET_SIMNODE:-$repo/hack/simnode}
require_tools
make_tmp
what=${1:?usage: render_feeds_binaries.sh dp|cni BINARY}
bin=${2:-}
[[ $bin == - ]] && bin=  # CMake's placeholder for a target that does not exist

# Renders the defaults and every per-mode values file; leaves their netconfs and config.json
# under $tmp/nc/<name>/.
render_all() {
  local name
  for name in default $(modes); do
    local args=() api=deviceplugin
    [[ $name == default ]] || args=(-f "$values_dir/$name.yaml") api=$(values_api "$values_dir/$name.yaml")
    render "$tmp/$name.yaml" "${args[@]}"
    node "$tests_dir/check_chart.js" "$tmp/$name.yaml" --netconf-out "$tmp/nc/$name" --api "$api" >/dev/null
  done
}

feed_device_plugin() {
  [[ -n $bin && -x $bin ]] || skip "rdmanet-device-plugin is not built (no CMake target yet)"
  grep -q -- '--check-config' <<<"$("$bin" --help 2>&1)" ||
    skip "$bin has no --check-config mode yet"
  render_all
  local n=0 f out rendered_args
  for f in "$tmp"/nc/*/device-plugin-config.json; do
    # The container's own args go through the real flag parser too (--check-config validates
    # the file after every flag has been parsed).
    mapfile -t rendered_args < <(node -e 'for (const a of JSON.parse(require("fs").readFileSync(
      process.argv[1]))) console.log(a)' "$(dirname "$f")/device-plugin-args.json")
    ((${#rendered_args[@]})) || die "no device plugin args rendered for $(dirname "$f")"
    if ! out=$("$bin" "${rendered_args[@]}" --check-config "$f" 2>&1); then
      echo "$out" >&2
      die "rdmanet-device-plugin rejects the args or config rendered from $(basename "$(dirname "$f")")"
    fi
    echo "accepted: $(basename "$(dirname "$f")") args and config.json"
    n=$((n + 1))
  done
  # Control: --check-config really checks. A key the plugin does not know must be refused, and
  # the message must name it.
  node -e 'const f=process.argv[1];const c=JSON.parse(require("fs").readFileSync(f));
    c.resourceList[0].selectors[0].vendorz=["15b3"];console.log(JSON.stringify(c))' \
    "$tmp/nc/default/device-plugin-config.json" >"$tmp/bad-config.json"
  if out=$("$bin" --check-config "$tmp/bad-config.json" 2>&1); then
    die "--check-config accepted an unknown selector key (vendorz)"
  fi
  grep -q vendorz <<<"$out" || die "--check-config's error does not name the key: $out"
  # Control: the flag parser really runs before --check-config: a bad rendered value is refused.
  if out=$("$bin" --doctor-interval 5x --check-config "$tmp/nc/default/device-plugin-config.json" 2>&1); then
    die "a bad --doctor-interval passed --check-config"
  fi
  grep -q -- --doctor-interval <<<"$out" || die "the flag error does not name the flag: $out"
  echo "PASS: $n rendered device plugin args + configs accepted; a bad config and a bad flag refused"
}

# --- CNI on the simulated node.

cni_env() {
  env CNI_COMMAND="$1" CNI_CONTAINERID="$2" CNI_NETNS="/var/run/netns/$netns" CNI_IFNAME=eth1 \
    CNI_PATH="$(dirname "$bin"):/usr/lib/cni" RDMANET_SYSFS_ROOT="$node_root" \
    RDMANET_STATE_DIR="$tmp/state" "$bin"
}

# The simulated node's PF netdevs (functions with sriov_totalvfs) as "name bdf" lines.
sim_pfs() {
  local d
  for d in "$node_root"/sys/class/net/*; do
    [[ -e $d/device/sriov_totalvfs ]] || continue
    echo "$(basename "$d") $(basename "$(readlink -f "$d/device")")"
  done
}

cleanup_cni() {
  [[ -n ${netns:-} ]] && ip netns del "$netns" 2>/dev/null
  [[ -n ${node_root:-} && -x $simnode ]] &&
    "$simnode" down --root "$node_root" >/dev/null 2>&1
  rm -rf "$tmp"
}

links_in_netns() { ip -n "$netns" -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort; }

feed_cni() {
  [[ -n $bin && -x $bin ]] || skip "the rdmanet CNI binary is not built (no CMake target yet)"
  [[ $(id -u) == 0 ]] || skip "needs root (netns, real links)"
  [[ -x $simnode ]] || skip "hack/simnode (the simulated node) does not exist yet"
  [[ -x /usr/lib/cni/host-local ]] || die "host-local missing: run hack/install-deps.sh"
  render_all
  trap cleanup_cni EXIT
  node_root=$tmp/node
  # Own interface-name prefix: no clash with other simulated nodes (tests run in parallel).
  "$simnode" up --root "$node_root" --ifprefix mfeed >/dev/null || die "hack/simnode up failed"
  mapfile -t pfs < <(sim_pfs)
  ((${#pfs[@]} >= 2)) || die "the simulated node has ${#pfs[@]} PF netdevs, need 2"
  read -r master _ <<<"${pfs[0]}"
  read -r hostdev hostdev_bdf <<<"${pfs[1]}"
  # macvlan's MTU may not exceed its master's; the rendered networks ask for 9000.
  ip link set dev "$master" mtu 9000 || die "cannot raise $master's MTU"
  netns=rdmanet-feed-$$
  # The node's root for pod-info dirs (cni/conf/node_config.h): this test's own.
  mkdir -p "$tmp/state"
  printf '{"podInfoRoot": "%s"}\n' "$tmp" >"$tmp/state/node.conf"
  ip netns add "$netns"
  ip -n "$netns" link set lo up
  local before ran=0 skipped=() i=0 rec
  before=$(links_in_netns)

  for rec in "$tmp"/nc/*/*.json; do
    [[ $(basename "$rec") == device-plugin-*.json ]] && continue
    local mode name
    mode=$(node -p 'require(process.argv[1]).netconf.mode' "$rec")
    name=$(node -p 'require(process.argv[1]).netconf.name' "$rec")
    if [[ $mode == sriov && ${RDMANET_FEED_SRIOV:-0} != 1 ]]; then
      skipped+=("$name (sriov: the host kernel has no SR-IOV; the vm-labelled tests run it)")
      continue
    fi
    i=$((i + 1))
    local feed=(node "$tests_dir/feed_netconf.js" "$rec" --master "$master" --device-id "$hostdev_bdf"
      --ipam-dir "$tmp/ipam" --subnet "10.99.$i.0/24" --pod-info-dir "$tmp/pod-info")
    local id=feed-$name out rc

    # 1. As rendered, lossless.check enforce must refuse a port that cannot report DCB: code 7,
    #    naming the port, and nothing left behind.
    if [[ $(node -p '(require(process.argv[1]).netconf.lossless||{}).check' "$rec") == enforce ]]; then
      "${feed[@]}" --keep-check >"$tmp/in.json" 2>/dev/null
      rc=0
      out=$(cni_env ADD "$id" <"$tmp/in.json") || rc=$?
      if [[ $rc == 0 ]]; then
        die "$name: ADD with lossless.check enforce succeeded on a port without DCB"
      fi
      if grep -q '"code": *2[,}]' <<<"$out"; then
        skipped+=("$name ($mode: the binary answers code 2, not implemented: $out)")
        continue
      fi
      grep -q '"code": *7[,}]' <<<"$out" || die "$name: enforce without DCB gave $out, want code 7"
      [[ $(links_in_netns) == "$before" ]] || die "$name: a refused ADD left links in the pod"
      echo "enforce refused as expected: $name: $out"
    fi

    # 2. ADD, check the pod's eth1, DEL, check nothing is left.
    "${feed[@]}" >"$tmp/in.json"
    rc=0
    out=$(cni_env ADD "$id" <"$tmp/in.json") || rc=$?
    if ((rc)); then
      if grep -q '"code": *2[,}]' <<<"$out"; then
        skipped+=("$name ($mode: the binary answers code 2, not implemented: $out)")
        continue
      fi
      die "$name: ADD failed ($rc): $out
stdin: $(cat "$tmp/in.json")"
    fi
    node -e 'const r=JSON.parse(process.argv[1]);
      if(!(r.interfaces||[]).some(i=>i.name==="eth1"&&i.sandbox))throw new Error("no eth1 in result");
      if(!(r.ips||[]).length)throw new Error("no IP in result")' "$out" ||
      die "$name: ADD result lacks eth1 or its IP: $out"
    ip -n "$netns" link show eth1 >/dev/null || die "$name: no eth1 in the pod after ADD"
    local mtu want
    mtu=$(ip -n "$netns" -o link show eth1 | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
    want=$(node -p 'require(process.argv[1]).netconf.mtu||""' "$rec")
    [[ -z $want || $mtu == "$want" ]] || die "$name: eth1 MTU $mtu, want $want"
    grep -q "10.99.$i." <<<"$(ip -n "$netns" -4 addr show dev eth1)" || die "$name: eth1 has no host-local IP"
    if [[ $mode == host-device ]]; then
      ip link show "$hostdev" >/dev/null 2>&1 && die "$name: $hostdev still in the host after ADD"
    fi

    out=$(cni_env DEL "$id" <"$tmp/in.json") || die "$name: DEL failed: $out"
    [[ $(links_in_netns) == "$before" ]] || die "$name: links left in the pod after DEL: $(links_in_netns)"
    if [[ $mode == host-device ]]; then
      ip link show "$hostdev" >/dev/null 2>&1 || die "$name: $hostdev not back in the host after DEL"
    fi
    if compgen -G "$tmp/ipam/*/10.99.*" >/dev/null; then die "$name: IPAM lease left after DEL"; fi
    if [[ -d $tmp/state ]] && [[ -n $(find "$tmp/state" -type f ! -name '*.lock' ! -name lock ! -name node.conf) ]]; then
      die "$name: state files left after DEL: $(find "$tmp/state" -type f)"
    fi
    # DEL is idempotent.
    cni_env DEL "$id" <"$tmp/in.json" >/dev/null || die "$name: a second DEL failed"
    echo "ADD/DEL ok: $name ($mode)"
    ran=$((ran + 1))
  done

  local s
  for s in "${skipped[@]}"; do echo "not run: $s"; done
  ((ran)) || skip "no rendered network could run on the simulated node yet (see 'not run')"
  echo "PASS: $ran rendered networks did ADD/DEL on the simulated node"
}

case $what in
  dp) feed_device_plugin ;;
  cni) feed_cni ;;
  *) die "unknown subcommand $what" ;;
esac
