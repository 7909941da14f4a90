#!/bin/bash
# rdmanet pre-flight check between two nodes (manifests/examples/preflight.yaml runs it as an
# Indexed Job of two pods). This file is the source: the example's ConfigMap holds a verbatim
# copy (hack/gen-preflight.sh writes it, tests/manifests/preflight_sync.sh checks they agree).
#
# The check is rdmanet's RDMA probe (`rdmanet-doctor probe`, deviceplugin/doctor/probe/probe.h):
# an RC connection through librdmacm on the pod's RDMA device, a ping-pong and an RDMA-write
# phase, judged against the port's rate (90 %) and the pool's DSCP (the traffic class the QP
# really uses); its exit code is the verdict. perftest and nccl-tests are the opt-in deeper run
# (PREFLIGHT_PERFTEST=1).
#
#   run.sh                the Job: index 1 serves the probe (and, opt-in, ib_write_bw and sshd
#                         for mpirun); index 0 learns index 1's RDMA address over ssh and probes it
#   run.sh gid            prints "hca=... gid-index=... line-rate=..." for this pod's device
#   run.sh probe-server   serves one probe client on this pod's RDMA address
#   run.sh probe PEER     the probe against PEER (an RDMA address), JSON on stdout, then a verdict
#                         line; exit 0 on PASS, 1 on FAIL (a missing GID is a FAIL before it runs)
#   run.sh bw-server      serves ib_write_bw (perftest) until a run succeeds, 3 runs at most
#   run.sh bw PEER        ib_write_bw against PEER, then the verdict against the line rate;
#                         exit 0 on PASS, 1 on FAIL
#
# Environment: NCCL_IB_HCA, NCCL_IB_TC, NCCL_IB_SL (injected by the rdmanet device plugin:
# "=mlx5_2", the pool's TOS and priority), and, to run it elsewhere (the VM test): PREFLIGHT_IP
# (else the IPv4 address of PREFLIGHT_IFACE, default eth1), PREFLIGHT_SYS (default /sys),
# PREFLIGHT_PROBE (the probe command, default "rdmanet-doctor probe"; the daemon's binary also
# has it: "rdmanet-device-plugin doctor probe"), PREFLIGHT_PROBE_ARGS (default
# "--count 1000 --bandwidth"), PREFLIGHT_DSCP (the switches' lossless DSCP, when it is not
# NCCL_IB_TC's), PREFLIGHT_PERFTEST (1: also ib_write_bw and all_reduce_perf),
# PREFLIGHT_BW_ARGS (default "-s 8388608 -D 10 -F"), PREFLIGHT_BW_PERCENT (default 90),
# PREFLIGHT_PORT (default 18515, perftest's TCP port and the probe's rdma_cm port).
set -euo pipefail
sys=${PREFLIGHT_SYS:-/sys}
bw_percent=${PREFLIGHT_BW_PERCENT:-90}
port=${PREFLIGHT_PORT:-18515}
read -r -a bw_args <<<"${PREFLIGHT_BW_ARGS:--s 8388608 -D 10 -F}"
read -r -a probe_cmd <<<"${PREFLIGHT_PROBE:-rdmanet-doctor probe}"
read -r -a probe_args <<<"${PREFLIGHT_PROBE_ARGS:---count 1000 --bandwidth}"
peer_name=rdmanet-preflight-1.rdmanet-preflight
ssh_opts=(-p 2222 -o StrictHostKeyChecking=no -o ConnectTimeout=5)

# The first HCA the device plugin gave this container ("=mlx5_2,mlx5_3" -> mlx5_2).
hca_of_env() {
  local h=${NCCL_IB_HCA:?NCCL_IB_HCA is not set (no RDMA device allocated?)}
  h=${h%%,*}
  h=${h#=}
  echo "${h%%:*}"
}

# gid_index HCA IPV4: the index of HCA's RoCE v2 GID for IPV4 (IPv4-mapped, ::ffff:a.b.c.d).
gid_index() {
  local port_dir=$sys/class/infiniband/$1/ports/1 want t n type gid a b c d
  IFS=. read -r a b c d <<<"$2"
  printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
  # Builtin reads only: a GID table has hundreds of entries (unused ones cannot be read).
  for t in "$port_dir"/gid_attrs/types/*; do
    n=${t##*/}
    read -r type <"$t" 2>/dev/null || continue
    [[ $type == "RoCE v2" ]] || continue
    read -r gid <"$port_dir/gids/$n" 2>/dev/null || continue
    if [[ $gid == "$want" ]]; then
      echo "$n"
      return 0
    fi
  done
  return 1
}

# line_rate HCA: the port's rate in Gb/s ("100 Gb/sec (4X EDR)" -> 100; "2.5 Gb/sec" -> 2.5).
line_rate() { sed -n 's/^\([0-9.]*\).*/\1/p' "$sys/class/infiniband/$1/ports/1/rate"; }

# bw_verdict BW RATE: the pass line; true when BW >= bw_percent% of RATE.
bw_verdict() {
  local ok=0
  awk -v bw="$1" -v rate="$2" -v p="$bw_percent" 'BEGIN {exit !(bw != "" && bw >= p / 100 * rate)}' && ok=1
  echo "ib_write_bw: ${1:-?} Gb/s, need >= ${bw_percent}% of ${2} Gb/s: $([[ $ok == 1 ]] && echo PASS || echo FAIL)"
  [[ $ok == 1 ]]
}

# Sets hca, ip, gid, rate for this pod; fails with a FAIL line when the GID is missing.
lookup() {
  hca=$(hca_of_env)
  ip=${PREFLIGHT_IP:-$(ip -4 -o addr show dev "${PREFLIGHT_IFACE:-eth1}" | awk '{split($4, a, "/"); print a[1]; exit}')}
  if ! gid=$(gid_index "$hca" "$ip"); then
    echo "FAIL: no RoCE v2 GID for $ip on $hca"
    return 1
  fi
  rate=$(line_rate "$hca")
  echo "hca=$hca gid-index=$gid line-rate=${rate}Gb/s"
}

# A run can fail after a good transfer: perftest reports only once it has calibrated its cycle
# counter against the clock (r^2 >= 0.9), and a busy or virtual CPU can spoil that ("Can't
# produce a report"). So the server serves and the client runs up to bw_runs times, after any
# failed run (the server cannot tell that failure from another); the client also waits, without
# counting, while the server is not listening yet.
bw_runs=3

# bw_server: serves until a run succeeds, at most bw_runs runs.
bw_server() {
  local run
  for ((run = 1; run <= bw_runs; run++)); do
    ib_write_bw -d "$hca" -x "$gid" -p "$port" "${bw_args[@]}" --report_gbits && return 0
  done
  return 1
}

# bw_client PEER: prints the output of the last run and the verdict.
bw_client() {
  local runs=0
  while ! ib_write_bw -d "$hca" -x "$gid" -p "$port" "${bw_args[@]}" --report_gbits "$1" \
    >/tmp/bw.txt 2>&1; do
    grep -q "Couldn't connect to" /tmp/bw.txt || ((++runs < bw_runs)) || break
    sleep 2
  done
  cat /tmp/bw.txt
  bw_verdict "$(awk -v s="${bw_args[1]}" '$1 == s {print $4}' /tmp/bw.txt)" "$rate"
}


# Probe flags for the pool: the TOS and priority the device plugin gives its pods (NCCL_IB_TC,
# NCCL_IB_SL), checked against the fabric's lossless DSCP (PREFLIGHT_DSCP, default the TOS's).
pool_args() {
  local tc=${NCCL_IB_TC:-104}
  echo "--tos $tc --dscp ${PREFLIGHT_DSCP:-$((tc >> 2))} --priority ${NCCL_IB_SL:-3}"
}

probe_server() {
  "${probe_cmd[@]}" --listen --once --bind "$ip" --port "$port" --device "$hca"
}

# probe_client PEER: the probe, its JSON report, then the verdict line (its exit code decides).
probe_client() {
  local rc=0
  # shellcheck disable=SC2046 # pool_args is a list of flags
  "${probe_cmd[@]}" "$1" --bind "$ip" --port "$port" --device "$hca" $(pool_args) --json \
    "${probe_args[@]}" || rc=$?
  echo "rdmanet probe $ip -> $1 via $hca: $([[ $rc == 0 ]] && echo PASS || echo "FAIL (exit $rc)")"
  return "$rc"
}

# The perftest and nccl-tests run (PREFLIGHT_PERFTEST=1), index 0's side.
deep_run() {
  local ok=0 ar_ok=0 busbw hcas want
  bw_client "$peer_name" && ok=1
  mpirun --allow-run-as-root -np 2 -H "localhost:1,$peer_name:1" \
    --mca plm_rsh_args "${ssh_opts[*]}" -x NCCL_IB_HCA -x NCCL_IB_TC -x NCCL_IB_SL \
    -x NCCL_IB_GID_INDEX="$gid" -x NCCL_SOCKET_IFNAME=eth0 -x NCCL_DEBUG=WARN \
    /opt/nccl-tests/build/all_reduce_perf -b 256M -e 4G -f 2 -g 8 | tee /tmp/ar.txt
  busbw=$(sed -n 's/.*Avg bus bandwidth *: *\([0-9.]*\).*/\1/p' /tmp/ar.txt)
  hcas=$(tr ',' '\n' <<<"$NCCL_IB_HCA" | grep -c .)
  want=$(awk -v r="$rate" -v n="$hcas" 'BEGIN {print 0.8 * n * r / 8}')
  awk -v b="$busbw" -v w="$want" 'BEGIN {exit !(b >= w)}' && ar_ok=1
  echo "all_reduce_perf: ${busbw} GB/s bus bandwidth, need >= ${want} GB/s (80%): $([[ $ar_ok == 1 ]] && echo PASS || echo FAIL)"
  [[ $ok == 1 && $ar_ok == 1 ]]
}

job() {
  lookup
  mkdir -p /root/.ssh
  cp /etc/preflight-ssh/id_ed25519 /etc/preflight-ssh/authorized_keys /root/.ssh/
  chmod 600 /root/.ssh/*
  if [[ $JOB_COMPLETION_INDEX == 1 ]]; then
    ssh-keygen -A >/dev/null
    /usr/sbin/sshd -p 2222 -o StrictModes=no
    probe_server >/tmp/probe-server.log 2>&1 &
    local server=$!
    until grep -q 'listening on' /tmp/probe-server.log; do
      kill -0 "$server" 2>/dev/null || { cat /tmp/probe-server.log && exit 1; }
      sleep 1
    done
    echo "$ip" >/tmp/rdma-addr # index 0 reads it over ssh once the probe server listens
    wait "$server" || { cat /tmp/probe-server.log && exit 1; }
    # In the background: a server run that fails after the client's succeeded (its own clock
    # calibration) serves again, and that wait must not keep this pod from ending.
    if [[ ${PREFLIGHT_PERFTEST:-0} == 1 ]]; then bw_server & fi
    until [[ -f /tmp/done ]]; do sleep 2; done # index 0 touches it when it is done
    exit 0
  fi
  local peer_ip ok=0
  until peer_ip=$(ssh "${ssh_opts[@]}" "$peer_name" cat /tmp/rdma-addr 2>/dev/null); do sleep 2; done
  probe_client "$peer_ip" && ok=1
  if [[ ${PREFLIGHT_PERFTEST:-0} == 1 ]]; then
    deep_run || ok=0
  fi
  ssh "${ssh_opts[@]}" "$peer_name" touch /tmp/done
  [[ $ok == 1 ]]
}

case ${1:-job} in
  job) job ;;
  gid) lookup ;;
  probe-server) lookup && probe_server ;;
  probe) lookup && probe_client "${2:?run.sh probe PEER}" ;;
  bw-server) lookup && bw_server ;;
  bw) lookup && bw_client "${2:?run.sh bw PEER}" ;;
  *) echo "usage: run.sh [gid | probe-server | probe PEER | bw-server | bw PEER]" >&2 && exit 2 ;;
esac
