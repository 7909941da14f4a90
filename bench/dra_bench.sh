#!/usr/bin/env bash
# DRA front benchmark (issue 12): the daemon in `--api dra` mode on a fake sysfs tree (simnode
# --tree-only, no root needed) of 8 PFs x 127 VFs = 1016 devices, against the stand-in API server
# (tests/fakes/apiserver, Node.js; it validates every ResourceSlice it stores). Measures
#   - publish: daemon start to the first complete pool on the server (16 slices of 64 devices,
#     one generation), polled on the server's list every 10 ms, not read from logs;
#   - memory: VmRSS and VmHWM of the daemon once published and after the prepare load
#     (target < 20 MB; the binary carries both fronts), split into RssAnon and RssFile;
#   - NodePrepareResources latency over many claims (rdmanet-dra-bench-client prepare), each
#     created with an allocation result on the server, then prepared and unprepared through the
#     DRA socket as kubelet does:
#       prepare            the full path: the daemon's GET of the claim included;
#       GET alone          the same GET timed from the client with the daemon's REST client;
#       prepare - GET      p99 of prepare minus p99 of GET (an estimate: the two are timed on
#                          separate calls, so it is not the p99 of a per-call difference);
#       prepare, checkpointed  the same call again: answered from the checkpoint, no GET and no
#                          write (a lower bound of the daemon's own share);
#       unprepare;
#     against a bare gRPC unary call to a do-nothing server in its own process on a unix socket
#     (rdmanet-dp-bench-client bare, the device-plugin bench's floor). Ratios are p99 / bare p99.
#   bench/dra_bench.sh [--vfs N] [--claims N] [--calls N] [--keep]
# BUILD_DIR as in dp_bench.sh (use a Release tree: `BUILD_DIR=build-rel bench/dra_bench.sh`);
# BIN_DIR=DIR takes the four binaries from DIR, unbuilt, as dp_scale.sh does.
# The machine may be shared: the load average is printed with the figures. Prints a report and,
# last, one JSON line.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
source "$repo/bench/lib.sh"
build_dir=${BUILD_DIR:-$repo/build}
[[ $build_dir = /* ]] || build_dir=$repo/$build_dir
n=127 claims=2000 calls=3000 keep=0
while (($#)); do
  case $1 in
    --vfs) n=$2; shift 2 ;;
    --claims) claims=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--vfs N (1..127)] [--claims N] [--calls N] [--keep]" >&2; exit 1 ;;
  esac
done
[[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 127)) || { echo "dra_bench: bad --vfs $n" >&2; exit 1; }
for tool in node jq; do
  command -v "$tool" >/dev/null || { echo "dra_bench: needs $tool" >&2; exit 1; }
done

if [[ -n ${BIN_DIR:-} ]]; then
  plugin=$BIN_DIR/rdmanet-device-plugin simnode=$BIN_DIR/rdmanet-simnode
  dp_client=$BIN_DIR/rdmanet-dp-bench-client client=$BIN_DIR/rdmanet-dra-bench-client
else
  if [[ ! -f $build_dir/build.ninja ]]; then
    cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir" -j2 --target rdmanet-device-plugin rdmanet-simnode \
    rdmanet-dp-bench-client rdmanet-dra-bench-client >/dev/null
  plugin=$build_dir/deviceplugin/rdmanet-device-plugin
  simnode=$build_dir/tests/simnode/rdmanet-simnode
  dp_client=$build_dir/tests/deviceplugin/rdmanet-dp-bench-client
  client=$build_dir/tests/deviceplugin/rdmanet-dra-bench-client
fi

work=$(mktemp -d /dev/shm/drabench.XXXXXX 2>/dev/null || mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if ((keep)); then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
scale_topology "$n" >"$work/topology.json"
"$simnode" up --tree-only --root "$work/node" --topology "$work/topology.json" >/dev/null
want=$((8 * n))
# One pool of the VFs (ConnectX-5 VF device 101e), as a VF-per-pod cluster configures it.
printf '%s\n' '{"resourceList": [{"resourceName": "vf", "selectors": {"devices": ["101e"],
  "isRdma": true}}]}' >"$work/pools.json"

node "$repo/tests/fakes/apiserver/apiserver.mjs" >"$work/api.out" 2>"$work/api.err" &
pids+=($!)
wait_for 30 grep -q '"port"' "$work/api.out" || { cat "$work/api.err" >&2; exit 1; }
url=http://127.0.0.1:$(grep -o '"port":[0-9]*' "$work/api.out" | cut -d: -f2)
node_name=bench-node driver=rdma.rdmanet.io
"$client" node --server "$url" --name "$node_name" >/dev/null
cat >"$work/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: b
clusters: [{name: b, cluster: {server: '$url'}}]
contexts: [{name: b, context: {cluster: b, user: b}}]
users: [{name: b, user: {token: b}}]
YAML

echo "fake tree: 8 PFs x $n VFs ($want devices); stand-in API server at $url"
t0=$(date +%s%N)
"$plugin" --api dra --node-name "$node_name" --kubeconfig "$work/kubeconfig" \
  --config "$work/pools.json" --kubelet-dir "$work/kubelet" --cdi-dir "$work/cdi" --sysfs-root "$work/node" \
  --metrics-addr off --doctor-interval 0 --log-level warn 2>"$work/plugin.log" &
dp=$!
pids+=("$dp")
published=$("$client" slices --server "$url" --node "$node_name" --want "$want" --since-ns "$t0") ||
  { tail "$work/plugin.log" >&2; exit 1; }
rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$dp/status")
hwm_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$dp/status")
threads=$(awk '/^Threads/ {print $2}' "/proc/$dp/status")
# Of VmRSS: the heap and stacks (RssAnon) and the mapped binary and shared libraries (RssFile,
# libcurl's TLS stack included), to tell data growth from code.
anon_kb=$(awk '/^RssAnon/ {print $2}' "/proc/$dp/status")
file_kb=$(awk '/^RssFile/ {print $2}' "/proc/$dp/status")
libs=$(awk '$6 ~ /\.so/ {print $6}' "/proc/$dp/maps" | sort -u | wc -l)

sock=$work/kubelet/plugins/$driver/dra.sock
wait_for 30 test -S "$sock" || { tail "$work/plugin.log" >&2; echo "no $sock" >&2; exit 1; }
echo "prepare + unprepare x $claims claims ..."
prep=$("$client" prepare --server "$url" --socket "$sock" --node "$node_name" --driver "$driver" \
  --n "$claims")
rss_after_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$dp/status")
hwm_after_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$dp/status")
left=$({ find "$work/cdi" -type f 2>/dev/null || true; } | wc -l)
echo "bare gRPC unary x $calls ..."
bare=$("$dp_client" bare --socket "$work/bare.sock" --n "$calls")
load=$(cut -d' ' -f1-3 /proc/loadavg)

field() { jq -r "$2" <<<"$1"; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a / b}'; }
verdict() { if awk "BEGIN {exit !($1)}"; then echo ok; else echo MISSED; fi; }
b50=$(field "$bare" .p50_us) b99=$(field "$bare" .p99_us)
row() {  # row LABEL P50 P99
  printf '%-36s p50 %8.0f us  p99 %8.0f us  %6s x bare p99\n' "$1" "$2" "$3" "$(ratio "$3" "$b99")"
}
p99() { field "$prep" ".$1.p99_us"; }
p50() { field "$prep" ".$1.p50_us"; }
minus99=$(awk -v a="$(p99 prepare)" -v b="$(p99 get)" 'BEGIN {print a - b}')
minus50=$(awk -v a="$(p50 prepare)" -v b="$(p50 get)" 'BEGIN {print a - b}')

printf '\n%-36s %s\n' "load average (1/5/15 min)" "$load"
printf '%-36s %s ms (%s slices, %s devices, generation %s, %s polls)\n' \
  "start to complete slices on server" "$(field "$published" '.ms | floor')" \
  "$(field "$published" .slices)" "$(field "$published" .devices)" \
  "$(field "$published" .generation)" "$(field "$published" .polls)"
printf '%-36s VmRSS %s MB, VmHWM %s MB (%s threads)  [%s, target < 20]\n' "memory, published" \
  "$(mb "$rss_kb")" "$(mb "$hwm_kb")" "$threads" "$(verdict "$hwm_kb < 20480")"
printf '%-36s RssAnon %s MB, RssFile %s MB (%s shared libraries mapped)\n' "  of which" \
  "$(mb "$anon_kb")" "$(mb "$file_kb")" "$libs"
printf '%-36s VmRSS %s MB, VmHWM %s MB\n' "memory, after $claims claims" "$(mb "$rss_after_kb")" \
  "$(mb "$hwm_after_kb")"
row "NodePrepareResources (with GET)" "$(p50 prepare)" "$(p99 prepare)"
row "  GET of the claim alone (client)" "$(p50 get)" "$(p99 get)"
row "  prepare - GET (estimate)" "$minus50" "$minus99"
row "  prepare again (checkpoint, no GET)" "$(p50 prepare_checkpointed)" "$(p99 prepare_checkpointed)"
row "NodeUnprepareResources" "$(p50 unprepare)" "$(p99 unprepare)"
row "bare gRPC unary (same socket kind)" "$b50" "$b99"
printf '%-36s %s %s (CDI files left: %s)\n' "errors" "$(field "$prep" .errors)" "$(field "$prep" .first_error)" "$left"
printf '{"devices":%s,"load":"%s","publish":%s,"rss_kb":%s,"hwm_kb":%s,"rss_anon_kb":%s,"rss_file_kb":%s,"rss_after_kb":%s,"hwm_after_kb":%s,"claims":%s,"bare":%s}\n' \
  "$want" "$load" "$published" "$rss_kb" "$hwm_kb" "$anon_kb" "$file_kb" "$rss_after_kb" "$hwm_after_kb" "$prep" "$bare"
