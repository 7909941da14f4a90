#!/usr/bin/env bash
# Device plugin scaling: fake sysfs trees (simnode --tree-only, no veths, no root needed) of 4
# dual-port NICs = 8 PFs with N VFs each, for every N given (default 16 32 64 127, i.e. 128 to
# 1016 VFs), in each RDMA shape of SHAPES (bench/lib.sh scale_topology; default "mlx5", an RDMA
# device per VF as mlx5 gives; SHAPES=all for every shape). Per shape and size it measures
#   - registration: plugin start to the fake kubelet accepting rdma/vf (wall ms), and the
#     plugin's CPU by then (all threads, the start-up doctor's included);
#   - resync CPU: the daemon loop's (main thread's) CPU per periodic resync (the check
#     that sysfs still shows what the last scan read, pools/scan_shape.h, and the re-read of port
#     and PF link states; a full rescan only on a difference), over several resyncs forced with
#     --resync-interval 1, after the start-up doctor has finished;
#   - doctor: one `rdmanet-doctor --json` over the same tree (wall ms, and its CPU ms);
#   - VmRSS and VmHWM of the plugin at steady state.
# Targets at 1016 VFs: registration < 500 ms, resync < 100 ms CPU, doctor < 1 s; growth of each
# from the smallest to the largest size under 12x for 8x the devices (linear is 8x).
#   bench/dp_scale.sh [N ...]      (run by bench/dp_bench.sh; BUILD_DIR as there, KEEP=1 keeps;
#                                   BIN_DIR=DIR takes the four binaries from DIR, unbuilt, e.g. to
#                                   compare with a copy of an older build)
# Wall times suffer on a busy machine; the CPU figures hardly do. Prints the table and, last,
# one JSON line.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
source "$repo/bench/lib.sh"
build_dir=${BUILD_DIR:-$repo/build}
[[ $build_dir = /* ]] || build_dir=$repo/$build_dir
keep=${KEEP:-0}
sizes=("$@")
((${#sizes[@]})) || sizes=(16 32 64 127)
for n in "${sizes[@]}"; do
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 127)) || { echo "dp_scale: bad size $n (1..127)" >&2; exit 1; }
done
read -r -a shapes <<<"${SHAPES:-mlx5}"
[[ ${shapes[*]} == all ]] && shapes=("${scale_shapes[@]}")
for shape in "${shapes[@]}"; do
  scale_topology 1 "$shape" >/dev/null || exit 1
done
resyncs=5  # rescans measured per size

if [[ -n ${BIN_DIR:-} ]]; then
  plugin=$BIN_DIR/rdmanet-device-plugin kubelet=$BIN_DIR/rdmanet-fake-kubelet
  simnode=$BIN_DIR/rdmanet-simnode doctor=$BIN_DIR/rdmanet-doctor
else
  if [[ ! -f $build_dir/build.ninja ]]; then
    cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir" -j2 --target rdmanet-device-plugin rdmanet-fake-kubelet \
    rdmanet-simnode rdmanet-doctor >/dev/null
  plugin=$build_dir/deviceplugin/rdmanet-device-plugin
  kubelet=$build_dir/tests/deviceplugin/rdmanet-fake-kubelet
  simnode=$build_dir/tests/simnode/rdmanet-simnode
  doctor=$build_dir/deviceplugin/doctor/rdmanet-doctor
fi

work=$(mktemp -d /dev/shm/dpscale.XXXXXX 2>/dev/null || mktemp -d)
pids=()
stop_all() {
  { exec 3>&-; } 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
cleanup() {
  stop_all
  if ((keep)); then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# CPU ns of the main thread, which runs the daemon loop and so the resyncs (schedstat: a
# resync's few ms are below a tick's 10 ms, and other threads' work, the periodic doctor's or
# gRPC's, is not the resync's).
cpu_ns() { awk '{printf "%d", $1}' "/proc/$1/schedstat"; }
scans() { grep -c 'resync of [0-9]* NIC functions' "$1" 2>/dev/null || true; }
scanned_at_least() { (($(scans "$1") >= $2)); }
hz=$(getconf CLK_TCK)

json=()
measure() {  # measure SHAPE N: appends a row to rows
  local shape=$1 n=$2
  vfs=$((8 * n))
  dir=$work/$shape-n$n
  mkdir -p "$dir"
  scale_topology "$n" "$shape" >"$dir/topology.json"
  "$simnode" up --tree-only --root "$dir/node" --topology "$dir/topology.json" >/dev/null

  mkfifo "$dir/kcmd"
  "$kubelet" --kubelet-dir "$dir/kubelet" --events "$dir/events.jsonl" --log "$dir/kubelet.log" \
    <"$dir/kcmd" &
  pids+=($!)
  exec 3>"$dir/kcmd"
  wait_for 10 test -S "$dir/kubelet/device-plugins/kubelet.sock"

  t0=$(date +%s%N)
  "$plugin" --kubelet-dir "$dir/kubelet" --sysfs-root "$dir/node" --devinfo-dir "$dir/devinfo" \
    --metrics-addr 127.0.0.1:0 --resync-interval 1 --log-level debug 2>"$dir/plugin.log" &
  dp=$!
  pids+=("$dp")
  registered() { grep -q '"accepted":true,.*"resource":"rdma/vf"' "$dir/events.jsonl" 2>/dev/null; }
  wait_for 120 registered || { tail "$dir/plugin.log" >&2; echo "no registration" >&2; exit 1; }
  reg=$(grep -m1 '"accepted":true,.*"resource":"rdma/vf"' "$dir/events.jsonl" |
    grep -o '"t_ns":[0-9]*' | cut -d: -f2)
  reg_ms=$(((reg - t0) / 1000000))
  reg_cpu_ms=$(($(cpu_ticks "$dp") * 1000 / hz))  # sampled just after: an upper bound
  count=$(grep '"event":"devices".*"resource":"rdma/vf"' "$dir/events.jsonl" | tail -1 |
    grep -o '"count":[0-9]*' | cut -d: -f2)

  # The start-up doctor runs on its own thread: measure resyncs once it is done.
  wait_for 120 grep -q 'node doctor:' "$dir/plugin.log" || true
  s0=$(scans "$dir/plugin.log")
  wait_for 120 scanned_at_least "$dir/plugin.log" $((s0 + 1))
  s1=$(scans "$dir/plugin.log") c1=$(cpu_ns "$dp")
  wait_for 300 scanned_at_least "$dir/plugin.log" $((s1 + resyncs))
  s2=$(scans "$dir/plugin.log") c2=$(cpu_ns "$dp")
  rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$dp/status")
  hwm_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$dp/status")
  resync_ms=$(awk -v c=$((c2 - c1)) -v s=$((s2 - s1)) 'BEGIN {printf "%.1f", c / 1e6 / s}')
  stop_all

  TIMEFORMAT='%R %U %S'
  { time "$doctor" --json --sysfs-root "$dir/node" >"$dir/doctor.json" 2>"$dir/doctor.err" ||
    true; } 2>"$dir/doctor.time"
  read -r dr du ds <"$dir/doctor.time"
  doctor_ms=$(awk -v r="$dr" 'BEGIN {printf "%d", r * 1000}')
  doctor_cpu_ms=$(awk -v u="$du" -v s="$ds" 'BEGIN {printf "%d", (u + s) * 1000}')
  grep -q '"checks"' "$dir/doctor.json" || { cat "$dir/doctor.err" >&2; echo "doctor failed" >&2; exit 1; }

  "$simnode" down --root "$dir/node" >/dev/null
  ((keep)) || rm -rf "$dir"
  echo "  $shape, $vfs VFs: registered in $reg_ms ms ($reg_cpu_ms ms CPU, $count devices)," \
    "resync $resync_ms ms CPU, doctor $doctor_ms ms ($doctor_cpu_ms ms CPU)," \
    "VmRSS $((rss_kb / 1024)) MB, VmHWM $((hwm_kb / 1024)) MB" >&2
  rows+=("$vfs $count $reg_ms $resync_ms $doctor_ms $rss_kb $reg_cpu_ms $doctor_cpu_ms $hwm_kb")
  json+=("{\"shape\":\"$shape\",\"vfs\":$vfs,\"devices\":$count,\"registered_ms\":$reg_ms,\"registered_cpu_ms\":$reg_cpu_ms,\"resync_cpu_ms\":$resync_ms,\"doctor_ms\":$doctor_ms,\"doctor_cpu_ms\":$doctor_cpu_ms,\"rss_kb\":$rss_kb,\"hwm_kb\":$hwm_kb}")
}

verdict() { if awk "BEGIN {exit !($1)}"; then echo ok; else echo MISSED; fi; }
table() {  # the rows of one shape, their growth and the targets
  printf '\n%s\n%-6s %-8s %-18s %-18s %-14s %s\n' "$1" VFs devices "registration ms" \
    "resync CPU ms" "doctor ms" "VmRSS / VmHWM MB"
  for r in "${rows[@]}"; do
    read -r vfs count reg res doc rss regc docc hwm <<<"$r"
    printf '%-6s %-8s %-18s %-18s %-14s %.1f / %.1f\n' "$vfs" "$count" "$reg ($regc CPU)" "$res" \
      "$doc ($docc CPU)" "$(awk -v k="$rss" 'BEGIN {print k / 1024}')" \
      "$(awk -v k="$hwm" 'BEGIN {print k / 1024}')"
  done
  ((${#rows[@]} > 1)) || return 0
  read -r v0 _ r0 s0 d0 m0 _ <<<"${rows[0]}"
  read -r v1 _ r1 s1 d1 m1 _ <<<"${rows[-1]}"
  growth() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (a > 0 ? b / a : 0)}'; }
  limit=$(awk -v a="$v0" -v b="$v1" 'BEGIN {print 1.5 * b / a}')
  printf '%-6s %-8s %-18s %-18s %-14s %s\n' "growth" "$(growth "$v0" "$v1")x" "$(growth "$r0" "$r1")x" \
    "$(growth "$s0" "$s1")x" "$(growth "$d0" "$d1")x" "$(growth "$m0" "$m1")x"
  if ((v1 == 1016)); then
    echo "targets at 1016 VFs: registration < 500 ms [$(verdict "$r1 < 500")]," \
      "resync < 100 ms CPU [$(verdict "$s1 < 100")], doctor < 1000 ms [$(verdict "$d1 < 1000")]"
  fi
  echo "growth ${v0}->${v1} VFs under $(printf '%.0f' "$limit")x:" \
    "registration [$(verdict "$r1 < $limit * ($r0 > 0 ? $r0 : 1)")]," \
    "resync [$(verdict "$s1 < $limit * ($s0 > 0 ? $s0 : 1)")]," \
    "doctor [$(verdict "$d1 < $limit * ($d0 > 0 ? $d0 : 1)")]"
}

for shape in "${shapes[@]}"; do
  rows=()
  for n in "${sizes[@]}"; do measure "$shape" "$n"; done
  table "$shape" >"$work/table-$shape"
done
for shape in "${shapes[@]}"; do cat "$work/table-$shape"; done
(IFS=,; echo "{\"scale\":[${json[*]}]}")
