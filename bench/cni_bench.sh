#!/usr/bin/env bash
# ADD+DEL cycles of rdmanet against Debian's reference macvlan plugin, side by side in one run,
# on the same master (a veth), without IPAM and with host-local. Root only.
#
#   bench/cni_bench.sh [--cycles N] [--rounds R] [--bin PATH]
#
# Rounds alternate the two plugins to share the machine's noise. Reported per ADD+DEL cycle:
# wall time (median over rounds) and CPU time (user+sys of the plugin processes, incl. IPAM
# children: the plugin's "own cost", free of the kernel's RCU waits in link deletion, which
# both plugins pay alike), plus the ratios rdmanet/reference. "own" subtracts what spawning a
# trivial process (/bin/true, run the same number of times) costs, which no plugin can avoid.
set -euo pipefail
cycles=100
rounds=5
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${RDMANET_BIN:-$repo/build/cni/rdmanet}
while [[ $# -gt 0 ]]; do
  case $1 in
    --cycles) cycles=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "cni_bench.sh: needs root" >&2; exit 1; }
[[ -x $bin ]] || { echo "cni_bench.sh: $bin not built (ninja rdmanet)" >&2; exit 1; }
ref=/usr/lib/cni/macvlan
[[ -x $ref ]] || { echo "cni_bench.sh: $ref missing (containernetworking-plugins)" >&2; exit 1; }

tag=bn$$
work=$(mktemp -d /tmp/rdmanet-bench.XXXXXX)
cleanup() {
  ip netns del "$tag" 2>/dev/null || true
  ip link del "${tag}m" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip link add "${tag}m" type veth peer name "${tag}p"
ip link set "${tag}m" up
ip link set "${tag}p" up
ip netns add "$tag"
# rdmanet must be found as "rdmanet" in CNI_PATH, next to host-local.
mkdir -p "$work/bin"
ln -s "$(readlink -f "$bin")" "$work/bin/rdmanet"

conf() {  # conf TYPE IPAM
  local ipam='{}'
  [[ $2 == host-local ]] && ipam="{\"type\": \"host-local\", \"subnet\": \"10.99.0.0/24\", \"dataDir\": \"$work/ipam\"}"
  printf '{"cniVersion": "1.0.0", "name": "bench", "type": "%s", "master": "%s", "mode": "bridge", "ipam": %s}\n' \
    "$1" "${tag}m" "$ipam"
}
export CNI_PATH=$work/bin:/usr/lib/cni CNI_NETNS=/var/run/netns/$tag CNI_IFNAME=net1 \
  CNI_CONTAINERID=bench RDMANET_STATE_DIR=$work/state

# cycle PLUGIN CONF: N times ADD then DEL; prints "wall_ms cpu_ms" per cycle.
cycle() {
  local plugin=$1 conffile=$2
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -o "$work/time.txt" -f '%U %S' bash -c '
      exec 2> /dev/null
      for ((i = 0; i < '"$cycles"'; i++)); do
        CNI_COMMAND=ADD "$0" < "$1" > /dev/null || exit 1
        CNI_COMMAND=DEL "$0" < "$1" > /dev/null || exit 1
      done' "$plugin" "$conffile"
  local times
  times=$(tail -1 "$work/time.txt")
  t1=$(date +%s%N)
  awk -v w=$(( (t1 - t0) )) -v n="$cycles" -v t="$times" \
    'BEGIN { split(t, a, " "); printf "%.3f %.3f\n", w / 1e6 / n, (a[1] + a[2]) * 1000 / n }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "rdmanet: $bin"
echo "reference: $ref ($(dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || echo '?'))"
echo "cycles per round: $cycles, rounds: $rounds, master: ${tag}m (veth)"
printf 'true\n' > "$work/true.json"
: > "$work/t.txt"
for ((r = 0; r < rounds; r++)); do cycle /bin/true "$work/true.json" >> "$work/t.txt"; done
bc=$(cut -d' ' -f2 "$work/t.txt" | median)
printf 'baseline: two /bin/true per cycle cost %.2f ms CPU\n' "$bc"
printf '%-12s %-10s %12s %12s %12s\n' ipam plugin wall_ms/cyc cpu_ms/cyc own_cpu_ms
for ipam in none host-local; do
  conf rdmanet "$ipam" > "$work/rdmanet.json"
  conf macvlan "$ipam" > "$work/macvlan.json"
  : > "$work/r.txt"
  : > "$work/m.txt"
  for ((r = 0; r < rounds; r++)); do
    cycle "$work/bin/rdmanet" "$work/rdmanet.json" >> "$work/r.txt"
    cycle "$ref" "$work/macvlan.json" >> "$work/m.txt"
  done
  rw=$(cut -d' ' -f1 "$work/r.txt" | median); rc=$(cut -d' ' -f2 "$work/r.txt" | median)
  mw=$(cut -d' ' -f1 "$work/m.txt" | median); mc=$(cut -d' ' -f2 "$work/m.txt" | median)
  printf '%-12s %-10s %12.2f %12.2f %12.2f\n' "$ipam" rdmanet "$rw" "$rc" "$(awk -v a="$rc" -v b="$bc" 'BEGIN{print a-b}')"
  printf '%-12s %-10s %12.2f %12.2f %12.2f\n' "$ipam" macvlan "$mw" "$mc" "$(awk -v a="$mc" -v b="$bc" 'BEGIN{print a-b}')"
  awk -v rw="$rw" -v mw="$mw" -v rc="$rc" -v mc="$mc" -v b="$bc" -v i="$ipam" \
    'BEGIN { printf "%-12s ratio      wall %.2f   cpu %.2f   own cpu %.2f   (rdmanet / reference)\n", i, rw / mw, rc / mc, (rc - b) / (mc - b) }'
done
leftover=$(ip -n "$tag" -o link show | grep -c net1 || true)
[[ $leftover -eq 0 ]] || { echo "cni_bench.sh: net1 left in the namespace" >&2; exit 1; }
