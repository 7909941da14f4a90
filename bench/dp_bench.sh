#!/usr/bin/env bash
# Device plugin benchmark, in two parts.
# 1. A simulated node with 2 PFs x 64 VFs (root: the node has real veths). Measures: resident
#    memory at steady state, start-to-registered time, Allocate p50/p99 over a few thousand calls
#    against a bare gRPC unary call on the same kind of unix socket, and link-down-to-stream
#    latency. Targets: RSS < 15 MB, Allocate p99 <= 2x bare, health < 100 ms.
# 2. Scaling (bench/dp_scale.sh): fake sysfs trees of 8 PFs x 16/32/64/127 VFs; per size the
#    time to registration, CPU per full resync, `rdmanet-doctor` once and RSS, as a table.
#    Targets at 1016 VFs: registration < 500 ms, resync < 100 ms CPU, doctor < 1 s, and growth
#    from 128 to 1016 VFs under 12x (linear is 8x).
#   bench/dp_bench.sh [--calls N] [--rounds K] [--keep] [--scale-only | --no-scale]
#                     [--sizes "16 32 64 127"]
# Builds its binaries into $BUILD_DIR (default build/; use a Release build for the scaling
# targets). Prints a report and, last, one JSON line per part.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$repo/build}
[[ $build_dir = /* ]] || build_dir=$repo/$build_dir
calls=3000 rounds=10 keep=0 part1=1 part2=1 sizes="16 32 64 127"
while (($#)); do
  case $1 in
    --calls) calls=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --scale-only) part1=0; shift ;;
    --no-scale) part2=0; shift ;;
    --sizes) sizes=$2; shift 2 ;;
    *) echo "usage: $0 [--calls N] [--rounds K] [--keep] [--scale-only | --no-scale]" \
      "[--sizes \"16 32 64 127\"]" >&2; exit 1 ;;
  esac
done
if ((!part1)); then
  # shellcheck disable=SC2086 # $sizes is a list of words
  exec env BUILD_DIR="$build_dir" KEEP="$keep" "$repo/bench/dp_scale.sh" $sizes
fi
if ((EUID != 0)); then echo "dp_bench: needs root (the simulated node creates veths)" >&2; exit 1; fi

if [[ ! -f $build_dir/build.ninja ]]; then
  cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build_dir" -j2 --target rdmanet-device-plugin rdmanet-fake-kubelet \
  rdmanet-simnode rdmanet-dp-bench-client rdmanet-doctor >/dev/null
plugin=$build_dir/deviceplugin/rdmanet-device-plugin
kubelet=$build_dir/tests/deviceplugin/rdmanet-fake-kubelet
simnode=$build_dir/tests/simnode/rdmanet-simnode
client=$build_dir/tests/deviceplugin/rdmanet-dp-bench-client

work=$(mktemp -d /dev/shm/dpbench.XXXXXX 2>/dev/null || mktemp -d)
prefix=b$(printf '%03x' $(($$ % 4096)))
pids=()
cleanup() {
  exec 3>&- 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$simnode" down --root "$work/node" >/dev/null 2>&1 || true
  if ((keep)); then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# One socket, one dual-port NIC with 64 VFs per port, and a GPU behind the same switch.
cat >"$work/topology.json" <<JSON
{"name": "bench-2x64", "host_bridges": [{"domain": 0, "bus": "0x00", "numa_node": 0,
  "root_ports": [{"switch": {"downstream": [
    {"nic": {"name": "ens1", "ports": 2, "vfs_per_port": 64, "total_vfs": 64}},
    {"gpu": {"device": "2330"}}]}}]}]}
JSON
echo "simulated node: 2 PFs x 64 VFs (prefix $prefix) ..."
"$simnode" up --root "$work/node" --ifprefix "$prefix" --topology "$work/topology.json" >/dev/null

mkfifo "$work/kcmd"
"$kubelet" --kubelet-dir "$work/kubelet" --events "$work/events.jsonl" --log "$work/kubelet.log" \
  <"$work/kcmd" &
pids+=($!)
exec 3>"$work/kcmd"  # keeps the fake kubelet's stdin open
until [[ -S $work/kubelet/device-plugins/kubelet.sock ]]; do sleep 0.01; done

t0=$(date +%s%N)
"$plugin" --kubelet-dir "$work/kubelet" --sysfs-root "$work/node" --devinfo-dir "$work/devinfo" \
  --metrics-addr 127.0.0.1:0 --log-level warn 2>"$work/plugin.log" &
dp=$!
pids+=("$dp")
t_ns() { grep -m1 "$1" "$work/events.jsonl" 2>/dev/null | grep -o '"t_ns":[0-9]*' | cut -d: -f2; }
for _ in $(seq 500); do
  reg=$(t_ns '"accepted":true,.*"resource":"rdma/vf"' || true)
  list=$(t_ns '"event":"devices".*"resource":"rdma/vf"' || true)
  [[ -n $reg && -n $list ]] && break
  sleep 0.02
done
[[ -n $reg && -n $list ]] || { cat "$work/plugin.log" >&2; echo "plugin never registered" >&2; exit 1; }
registered_ms=$(((reg - t0) / 1000000))
listed_ms=$(((list - t0) / 1000000))
count=$(grep -m1 '"event":"devices".*"resource":"rdma/vf"' "$work/events.jsonl" |
  grep -o '"count":[0-9]*' | cut -d: -f2)

sleep 3  # steady state: streams open, artifacts written
rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$dp/status")
hwm_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$dp/status")
threads=$(awk '/^Threads/ {print $2}' "/proc/$dp/status")

sock=$work/kubelet/device-plugins/rdmanet-rdma-vf.sock
id=$(grep -m1 '"event":"devices".*"resource":"rdma/vf"' "$work/events.jsonl" |
  grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
echo "Allocate x $calls on $id ..."
alloc=$("$client" allocate --socket "$sock" --id "$id" --n "$calls")
bare=$("$client" bare --socket "$work/bare.sock" --n "$calls")
echo "link flaps x $rounds ..."
# The PF's link: a VF's health follows its PF's link and port, not its own netdev's (a free VF
# is down and healthy), so the flap is on ens1f0 and the stream watched for its VF 5.
link=$("$client" linkdown --socket "$sock" --root "$work/node" --netdev "${prefix}ens1f0" \
  --device-of "${prefix}ens1f0v5" --rounds "$rounds")
rss_after_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$dp/status")

field() { grep -o "\"$2\":[0-9.e+-]*" <<<"$1" | head -1 | cut -d: -f2; }
a50=$(field "$alloc" p50_us) a99=$(field "$alloc" p99_us) aerr=$(field "$alloc" errors)
b50=$(field "$bare" p50_us) b99=$(field "$bare" p99_us)
down_med=$(grep -o '"down":{[^}]*}' <<<"$link" | grep -o '"median_ms":[0-9.e+-]*' | cut -d: -f2)
down_max=$(grep -o '"down":{[^}]*}' <<<"$link" | grep -o '"max_ms":[0-9.e+-]*' | cut -d: -f2)
up_med=$(grep -o '"up":{[^}]*}' <<<"$link" | grep -o '"median_ms":[0-9.e+-]*' | cut -d: -f2)
ratio=$(awk -v a="$a99" -v b="$b99" 'BEGIN {printf "%.2f", a / b}')
verdict() { if awk "BEGIN {exit !($1)}"; then echo ok; else echo MISSED; fi; }

printf '\n%-34s %s\n' "devices (rdma/vf)" "$count"
printf '%-34s %s ms (first device list %s ms)\n' "start to registered" "$registered_ms" "$listed_ms"
printf '%-34s %s MB (peak %s MB, %s threads; after load %s MB)  [%s, target < 15]\n' \
  "RSS at steady state" "$(awk -v k="$rss_kb" 'BEGIN {printf "%.1f", k / 1024}')" \
  "$(awk -v k="$hwm_kb" 'BEGIN {printf "%.1f", k / 1024}')" "$threads" \
  "$(awk -v k="$rss_after_kb" 'BEGIN {printf "%.1f", k / 1024}')" "$(verdict "$rss_kb < 15360")"
printf '%-34s p50 %s us  p99 %s us  (errors %s)\n' "Allocate" "$a50" "$a99" "$aerr"
printf '%-34s p50 %s us  p99 %s us\n' "bare gRPC unary (same socket kind)" "$b50" "$b99"
printf '%-34s %s x  [%s, target <= 2]\n' "Allocate p99 / bare p99" "$ratio" "$(verdict "$ratio <= 2")"
printf '%-34s median %s ms  max %s ms (link up: median %s ms)  [%s, target < 100]\n' \
  "link down -> stream" "$down_med" "$down_max" "$up_med" "$(verdict "$down_max < 100")"
printf '{"devices":%s,"registered_ms":%s,"first_list_ms":%s,"rss_kb":%s,"rss_peak_kb":%s,"allocate":%s,"bare":%s,"link":%s}\n' \
  "$count" "$registered_ms" "$listed_ms" "$rss_kb" "$hwm_kb" "$alloc" "$bare" "$link"
if ((part2)); then
  cleanup
  trap - EXIT
  echo
  # shellcheck disable=SC2086 # $sizes is a list of words
  BUILD_DIR="$build_dir" KEEP="$keep" "$repo/bench/dp_scale.sh" $sizes
fi
