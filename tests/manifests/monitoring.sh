#!/usr/bin/env bash
# The chart's alerts and Grafana dashboard (issue 24), rendered with
# metrics.prometheusRule.enabled and metrics.dashboard.enabled, checked with Prometheus's own
# promtool (Debian's prometheus package, from hack/install-deps.sh):
#
#   monitoring.sh rules      promtool check rules on the rendered rules, and promtool test rules
#                            with rules/alerts_test.yaml: each alert firing and staying quiet;
#                            then each alert made unable to fire must fail those tests
#   monitoring.sh dashboard  the dashboard's shape, and every panel's and variable's query
#                            parsed by promtool
#   monitoring.sh names DEVICE_PLUGIN FAKE_KUBELET SIMNODE
#                            every metric the rules and the dashboard read is on the real
#                            daemon's /metrics (on a simulated node, tree only: no root), or in
#                            monitoring.js' kNotYetOnMetrics or kExternal, with the labels they
#                            select and group by
source "$(dirname "$0")/lib.sh"
require_tools
make_tmp
what=${1:?usage: monitoring.sh rules|dashboard|names ...}
command -v promtool >/dev/null || die "no promtool: run hack/install-deps.sh (Debian's prometheus)"
check=(node "$tests_dir/check_monitoring.js")
render "$tmp/r.yaml" --set metrics.prometheusRule.enabled=true --set metrics.dashboard.enabled=true
node "$tests_dir/check_chart.js" "$tmp/r.yaml" >/dev/null || die "the render with monitoring on is invalid"

case $what in
  rules)
    "${check[@]}" rules "$tmp/r.yaml" "$tests_dir/rules/alerts_test.yaml" "$tmp/rules"
    out=$(promtool check rules "$tmp/rules/rules.yaml" 2>&1) ||
      { echo "$out" >&2; die "promtool check rules"; }
    grep -q SUCCESS <<<"$out" || die "promtool check rules: $out"
    cp "$tests_dir/rules/alerts_test.yaml" "$tmp/rules/"
    out=$(promtool test rules "$tmp/rules/alerts_test.yaml" 2>&1) ||
      { echo "$out" >&2; die "promtool test rules"; }
    echo "promtool test rules: every alert test passes"
    # Controls: the tests notice each alert that can no longer fire.
    n=0
    for d in "$tmp/rules"/never-*/; do
      alert=$(basename "$d")
      alert=${alert#never-}
      cp "$tests_dir/rules/alerts_test.yaml" "$d"
      if out=$(promtool test rules "$d/alerts_test.yaml" 2>&1); then
        die "the tests pass with $alert unable to fire"
      fi
      grep -q "alertname: $alert," <<<"$out" || die "with $alert unable to fire, another test failed: $out"
      n=$((n + 1))
    done
    ((n >= 6)) || die "expected at least 6 alerts, found $n"
    echo "PASS: rules checked and unit-tested; each of $n alerts, unable to fire, fails its tests"
    ;;
  dashboard)
    "${check[@]}" dashboard "$tmp/r.yaml" "$tmp/dash"
    echo "PASS: dashboard"
    ;;
  names)
    dp=${2:--} kubelet=${3:--} simnode=${4:--}
    for b in "$dp" "$kubelet" "$simnode"; do
      [[ $b != - && -x $b ]] || skip "$b is not built"
    done
    pids=()
    cleanup() {
      { exec 3>&-; } 2>/dev/null || true
      for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
      wait 2>/dev/null || true
      rm -rf "$tmp"
    }
    trap cleanup EXIT
    "$simnode" up --tree-only --root "$tmp/node" --topology "$repo/hack/topologies/default.json" \
      >/dev/null || die "simnode up"
    mkfifo "$tmp/kcmd"
    "$kubelet" --kubelet-dir "$tmp/kubelet" --events "$tmp/events.jsonl" --log "$tmp/kubelet.log" \
      <"$tmp/kcmd" &
    pids+=($!)
    exec 3>"$tmp/kcmd"  # keeps the fake kubelet's stdin open
    poll() {  # poll SECONDS COMMAND...: every 50 ms until it succeeds
      local deadline=$((SECONDS + $1))
      shift
      until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
      done
    }
    poll 20 test -S "$tmp/kubelet/device-plugins/kubelet.sock" || die "the fake kubelet did not start"
    # A doctor run every second: its counter deltas appear from the second run on.
    "$dp" --kubelet-dir "$tmp/kubelet" --sysfs-root "$tmp/node" --devinfo-dir "$tmp/devinfo" \
      --metrics-addr 127.0.0.1:0 --doctor-interval 1s --log-level info 2>"$tmp/dp.log" &
    pids+=($!)
    port() { sed -n 's/.*metrics listening on port \([0-9]*\).*/\1/p' "$tmp/dp.log" | head -1; }
    listening() { [[ -n $(port) ]]; }
    poll 30 listening || { cat "$tmp/dp.log" >&2; die "the daemon serves no /metrics"; }
    scraped() {
      curl -sf "http://127.0.0.1:$(port)/metrics" >"$tmp/metrics.txt" &&
        grep -q '^rdmanet_dp_registered{.*} 1$' "$tmp/metrics.txt" &&
        grep -q '^rdmanet_doctor_counter_delta{' "$tmp/metrics.txt"
    }
    poll 60 scraped ||
      { tail "$tmp/dp.log" >&2; die "/metrics never showed a registered pool and doctor deltas"; }
    "${check[@]}" names "$tmp/r.yaml" "$tmp/metrics.txt"
    echo "PASS: every metric the rules and the dashboard read is accounted for"
    ;;
  *) die "unknown check $what" ;;
esac
