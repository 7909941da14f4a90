#!/usr/bin/env bash
# The pod series' scrape cost (issue 24): one /metrics scrape's rdmanet_pod_* and rdmanet_port_*
# series (podnet/pod_metrics.h) on the scaling node's fake sysfs tree, at 128 pods x 1 VF (8 PFs
# x 16 VFs) and at 1016 pods on 1016 VFs (8 x 127), mlx5-shaped. Ethtool and netlink are fakes
# (tests/deviceplugin/bench/pod_scrape_bench.cc), so the figures are the daemon's own work. As
# root it also times real trips into throw-away namespaces, the extra cost per pod whose RDMA
# device is in its netns (exclusive mode).
#   bench/pod_scrape.sh        (BUILD_DIR as in dp_scale.sh; ROUNDS=20, TRIPS=64)
# Target: a 1016-pod scrape under 1 s, linear in the pods. Prints a table, then one JSON line.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$repo/build}
[[ $build_dir = /* ]] || build_dir=$repo/$build_dir
rounds=${ROUNDS:-20}
trips=${TRIPS:-64}
((EUID == 0)) || trips=0
cmake --build "$build_dir" -j2 --target rdmanet-pod-scrape-bench >/dev/null
bench=$build_dir/tests/deviceplugin/rdmanet-pod-scrape-bench

small=$("$bench" 16 128 "$rounds" "$trips")
large=$("$bench" 127 1016 "$rounds" 0)
printf '%-22s %10s %10s %10s %10s\n' shape "p50 ms" "p90 ms" "MB" series
for r in "$small" "$large"; do
  /usr/bin/python3 - "$r" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
s = r["scrape"]
print(f'{r["pods"]:>4} pods / {r["vfs"]:>4} VFs  {s["p50_us"]/1e3:10.1f} {s["p90_us"]/1e3:10.1f} '
      f'{r["bytes"]/1e6:10.2f} {r["lines"]:10d}')
if "netns_trip" in r:
    t = r["netns_trip"]
    print(f'netns trip (exclusive mode, per pod): p50 {t.get("p50_us", 0)/1e3:.2f} ms, '
          f'p90 {t.get("p90_us", 0)/1e3:.2f} ms over {t.get("n", 0)}')
PY
done
echo "{\"small\": $small, \"large\": $large}"
