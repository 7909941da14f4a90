#!/usr/bin/env bash
# ADD+DEL cycles of rdmanet against Debian's reference macvlan plugin, side by side in one run,
# on the same master (a veth) and into the same netns, without IPAM and with host-local (same
# subnet and dataDir for both). Root only.
#
#   bench/cni_bench.sh [--cycles N] [--rounds R] [--bin PATH] [--lossless LIST]
#
# --lossless LIST (comma-separated of off, warn, enforce): one rdmanet row per entry, its netconf
# with "lossless": {"priority": 3, "check": ENTRY}, and "mtu": 1500 in every netconf of the run
# (the reference's too), so the ADD path's lossless reads run: the port's DCB and, for the pod
# MTU check, the master's MTU. On the bench's veth, which reports no DCB, "enforce" refuses
# every ADD (the DCB half), so it cannot be measured here; "warn" runs the same reads and logs.
# All rows share the rounds (rotated order); each variant is also compared with the first.
#
# One "cycle" is CNI ADD then CNI DEL of net1, each a fresh exec with the netconf on stdin, run
# N times in a loop; each plugin's loop is one sample. Rounds alternate the plugins (ABBA order,
# so neither always runs first) to share the machine's noise; every figure is the median over
# rounds (and the own cpu ratio's per-round spread is printed too), per cycle:
#   wall      elapsed time of the loop / N
#   cpu       user+sys of the loop's whole process tree / N (the plugin, the IPAM plugin it
#             execs, and the bash loop itself), from bash's `time`
#   exec      the same loop with /bin/true instead of the plugin: two fork+exec of a trivial
#             binary per cycle, which no plugin can avoid (wall and cpu)
#   kernel    the kernel's own work of making and destroying the link, measured on its own
#             with iproute2: `ip link add net1 link <master> netns <ns> type macvlan mode
#             bridge` + `ip -n <ns> link del net1`, minus `ip link show dev <master>` +
#             `ip -n <ns> link show dev lo` (the same two ip execs, netns switch and rtnl
#             socket, no link). Its wall is almost all the RCU wait of link deletion
#             (synchronize_net, ~10-20 ms here); its cpu is the kernel building and tearing
#             down a netdev (sysfs, sysctl, IPv6 addrconf). Both plugins pay both alike.
#   own cpu   cpu - exec.cpu - kernel.cpu: what the plugin itself costs beyond two trivial
#             execs and the kernel's link work (its start-up and runtime, parsing, netlink
#             round trips, netns switches, state files, IPAM execs). This is the issue's
#             "own cost": its target is own cpu (no IPAM) of rdmanet at most 1/5 of the
#             reference's. Steadier than wall on a shared machine, but the reference's
#             (Go) CPU itself swings with the machine's load: compare runs at similar load.
#   own wall  wall - exec.wall - kernel.wall: the same on the clock; noisier (run-queue waits).
# Ratios are rdmanet / reference.
set -euo pipefail
cycles=100
rounds=7
variants=(none)
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${RDMANET_BIN:-$repo/build/cni/rdmanet}
while [[ $# -gt 0 ]]; do
  case $1 in
    --cycles) cycles=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --lossless) IFS=, read -r -a variants <<<"$2"; shift 2 ;;
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

conf() {  # conf TYPE IPAM [LOSSLESS_CHECK]
  local ipam='{}' extra=''
  [[ $2 == host-local ]] && ipam="{\"type\": \"host-local\", \"subnet\": \"10.99.0.0/24\", \"dataDir\": \"$work/ipam\"}"
  [[ ${variants[*]} != none ]] && extra=', "mtu": 1500'
  [[ ${3:-none} != none ]] && extra+=", \"lossless\": {\"priority\": 3, \"check\": \"$3\"}"
  printf '{"cniVersion": "1.0.0", "name": "bench", "type": "%s", "master": "%s", "mode": "bridge", "ipam": %s%s}\n' \
    "$1" "${tag}m" "$ipam" "$extra"
}
export CNI_PATH=$work/bin:/usr/lib/cni CNI_NETNS=/var/run/netns/$tag CNI_IFNAME=net1 \
  CNI_CONTAINERID=bench RDMANET_STATE_DIR=$work/state

# run_loop BODY ARGS...: runs BODY (a bash loop over $cycles) and prints "wall_ms cpu_ms" per
# cycle. bash's `time` reports the elapsed time and the user+sys of every process it waited for.
run_loop() {
  local body=$1
  shift
  local TIMEFORMAT='%3R %3U %3S' t
  t=$( { time bash -c "exec 2> /dev/null; n=$cycles; $body" "$@"; } 2>&1) || {
    echo "cni_bench.sh: loop failed: $body $*" >&2
    exit 1
  }
  awk -v n="$cycles" -v t="$t" \
    'BEGIN { split(t, a, " "); printf "%.3f %.3f\n", a[1] * 1000 / n, (a[2] + a[3]) * 1000 / n }'
}
# cycle PLUGIN CONF: ADD then DEL, $cycles times.
cycle() {
  run_loop 'for ((i = 0; i < n; i++)); do
      CNI_COMMAND=ADD "$0" < "$1" > /dev/null || exit 1
      CNI_COMMAND=DEL "$0" < "$1" > /dev/null || exit 1
    done' "$@"
}
kernel_cycle() {  # the same link made and destroyed by iproute2
  run_loop 'for ((i = 0; i < n; i++)); do
      ip link add net1 link "$0" netns "$1" type macvlan mode bridge || exit 1
      ip -n "$1" link del net1 || exit 1
    done' "${tag}m" "$tag"
}
ip_baseline_cycle() {  # the same two ip execs, netns switch and rtnl socket, but no link made
  run_loop 'for ((i = 0; i < n; i++)); do
      ip link show dev "$0" || exit 1
      ip -n "$1" link show dev lo || exit 1
    done > /dev/null' "${tag}m" "$tag"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { cut -d' ' -f"$2" "$1" | median; }

echo "rdmanet: $bin ($(ldd "$bin" 2>&1 | grep -q 'statically linked' && echo static || echo dynamic))"
echo "reference: $ref ($(dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || echo '?'))"
echo "cycles per round: $cycles, rounds: $rounds, master: ${tag}m (veth), $(nproc) CPUs," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'true\n' > "$work/true.json"
: > "$work/true.txt"
: > "$work/kern.txt"
: > "$work/ipv.txt"
for ((r = 0; r < rounds; r++)); do
  cycle /bin/true "$work/true.json" >> "$work/true.txt"
  kernel_cycle >> "$work/kern.txt"
  ip_baseline_cycle >> "$work/ipv.txt"
done
ew=$(col "$work/true.txt" 1)
ec=$(col "$work/true.txt" 2)
kw=$(awk -v a="$(col "$work/kern.txt" 1)" -v b="$(col "$work/ipv.txt" 1)" 'BEGIN { print a - b }')
kc=$(awk -v a="$(col "$work/kern.txt" 2)" -v b="$(col "$work/ipv.txt" 2)" 'BEGIN { print a - b }')
printf 'exec floor (two /bin/true per cycle): wall %.2f ms, cpu %.2f ms\n' "$ew" "$ec"
printf 'kernel link add+del (iproute2, minus the same ip execs without the link): wall %.2f ms, cpu %.2f ms\n' \
  "$kw" "$kc"
printf '%-11s %-8s %9s %9s %9s %9s   (ms per ADD+DEL cycle, median of %d rounds)\n' \
  ipam plugin wall cpu own_cpu own_wall "$rounds"
nv=${#variants[@]}
for ipam in none host-local; do
  conf macvlan "$ipam" > "$work/macvlan.json"
  : > "$work/m.txt"
  for ((v = 0; v < nv; v++)); do
    conf rdmanet "$ipam" "${variants[v]}" > "$work/rdmanet$v.json"
    : > "$work/r$v.txt"
  done
  for ((r = 0; r < rounds; r++)); do
    # Slot 0 is the reference, slot v+1 rdmanet's variant v. Two plugins: ABBA order; more:
    # rotated by one each round, so each runs first as often.
    for ((k = 0; k <= nv; k++)); do
      if ((nv == 1)); then
        slot=$(((r % 4 == 0 || r % 4 == 3) ? 1 - k : k))
      else
        slot=$(((k + r) % (nv + 1)))
      fi
      if ((slot == 0)); then
        cycle "$ref" "$work/macvlan.json" >> "$work/m.txt"
      else
        cycle "$work/bin/rdmanet" "$work/rdmanet$((slot - 1)).json" >> "$work/r$((slot - 1)).txt"
      fi
    done
  done
  mw=$(col "$work/m.txt" 1); mc=$(col "$work/m.txt" 2)
  for ((v = 0; v < nv; v++)); do
    name=rdmanet
    ((nv > 1)) || [[ ${variants[v]} != none ]] && name=${variants[v]}
    rw=$(col "$work/r$v.txt" 1); rc=$(col "$work/r$v.txt" 2)
    ((v == 0)) && { fw=$rw; fc=$rc; }
    awk -v rw="$rw" -v rc="$rc" -v mw="$mw" -v mc="$mc" -v ew="$ew" -v ec="$ec" -v kw="$kw" \
      -v kc="$kc" -v i="$ipam" -v n="$name" -v v="$v" -v fw="$fw" -v fc="$fc" -v f="${variants[0]}" 'BEGIN {
        ro = rc - ec - kc; mo = mc - ec - kc; row = rw - ew - kw; mow = mw - ew - kw
        printf "%-11s %-8s %9.2f %9.2f %9.2f %9.2f\n", i, n, rw, rc, ro, row
        if (v == 0) printf "%-11s %-8s %9.2f %9.2f %9.2f %9.2f\n", i, "macvlan", mw, mc, mo, mow
        printf "%-11s ratio    %9.2f %9.2f %9.2f %9.2f   (%s / reference)\n", i, rw / mw,
          rc / mc, ro / mo, row / mow, n
        if (v > 0) printf "%-11s ratio    %9.2f %9.2f %9.2f %9.2f   (%s / %s)\n", i, rw / fw,
          rc / fc, ro / (fc - ec - kc), row / (fw - ew - kw), n, f
      }'
    # The reference's CPU varies a lot between rounds (the Go runtime's idle threads spin more or
    # less depending on the machine's load), so show the spread of the per-round own cpu ratios.
    paste -d' ' "$work/r$v.txt" "$work/m.txt" | awk -v ec="$ec" -v kc="$kc" -v i="$ipam" '
      { q = ($2 - ec - kc) / ($4 - ec - kc); lo = (NR == 1 || q < lo) ? q : lo; hi = (NR == 1 || q > hi) ? q : hi }
      END { printf "%-11s own cpu ratio per round: %.2f .. %.2f\n", i, lo, hi }'
  done
done
leftover=$(ip -n "$tag" -o link show | grep -c net1 || true)
[[ $leftover -eq 0 ]] || { echo "cni_bench.sh: net1 left in the namespace" >&2; exit 1; }
