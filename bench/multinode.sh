#!/usr/bin/env bash
# The job across the VM cluster's nodes (issue 30, section 5), all in one run on two VM nodes
# (hack/cluster/vmnodes.sh; the accelerator, TCG or KVM, is in the output):
#   - job start: both rank pods (one per node, a VF each through rdma/vf, eth1 wired by rdmanet
#     through Multus) created at once, until both are Ready; N rounds, the median;
#   - RDMA write bandwidth pod to pod across the nodes on their VFs (Soft-RoCE over each pod's
#     eth1, tests/cluster/vm_job.sh), against the same between the nodes' PFs in their host
#     netns (Soft-RoCE on the igb PF itself): the baseline, measured alternately with it, N
#     rounds each, the median of each and their ratio;
#   - the MPI all-reduce's bus bandwidth (tests/cluster/mpi_job.sh: Open MPI over UCX on the
#     pods' RDMA devices, launched through the API) at 512 KiB, against the pairwise VF
#     bandwidth (an all-reduce of two ranks moves as much over each link as a write of the same
#     size: busbw = algbw here), as a ratio.
#   - the cross-node pre-flight's wall time (`rdmanet-doctor preflight` over the 2 nodes: a probe
#     server pod per node, then a client pod per ordered pair, one pair at a time; N rounds, the
#     median), and its parts: the set-up (the server pods, the nodes' checklists) and the time
#     per pair, from which it grows with N: set-up + N(N-1) pairs up to 8 nodes, N pairs in ring
#     order beyond.
#
#   bench/multinode.sh [--rounds N]
# Needs root. Takes the test cluster down first and leaves it down. Prints a table and, last,
# one JSON line.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=3
while (($#)); do
  case $1 in
    --rounds) rounds=$2 && shift 2 ;;
    *) echo "usage: $0 [--rounds N]" >&2 && exit 2 ;;
  esac
done
[[ $rounds =~ ^[0-9]+$ ]] && ((rounds >= 1 && rounds <= 20)) ||
  { echo "multinode: bad --rounds $rounds" >&2 && exit 2; }
# shellcheck source=tests/cluster/lib.sh
. "$repo/tests/cluster/lib.sh"
# shellcheck source=tests/cluster/vm_job.sh
. "$repo/tests/cluster/vm_job.sh"
# shellcheck source=tests/cluster/mpi_job.sh
. "$repo/tests/cluster/mpi_job.sh"
nodes=2
work=$(mktemp -d)
# A failure keeps the work dir (perftest's and mpirun's output) and says where it stopped.
trap 'echo "multinode bench: failed at line $LINENO (its files: $work)" >&2; work=' ERR
trap 'capture_stop; [[ -z $work ]] || rm -rf "$work"; "$cluster" down >/dev/null 2>&1 || true' EXIT
cd "$work"

# The median of the numbers on stdin, one a line (empty lines skipped), or "none".
median() { sort -g | awk 'NF {v[++n] = $1} END {if (n) print v[int((n + 1) / 2)]; else print "none"}'; }

"$cluster" down >/dev/null 2>&1 || true
start=$SECONDS
"$cluster" up --api deviceplugin --nodes "$nodes" >up.log 2>&1 ||
  { grep -av 'console: \[' up.log >&2 && fail "cluster up --nodes $nodes"; }
up_s=$((SECONDS - start))
accel=$(sed -n 's/^vm-accel=//p' "$state_dir/cluster.env")
kc create namespace "$ns" >/dev/null
wait_until 60 "default ServiceAccount in $ns" kc -n "$ns" get serviceaccount default
wait_node_vfs

# Job start, N rounds (the last round's pods stay for the rest).
starts=()
for ((r = 1; r <= rounds; r++)); do
  t0=$(date +%s%N)
  for ((i = 1; i <= nodes; i++)); do rank_pod "$i" | kc apply -f - >/dev/null; done
  for ((i = 1; i <= nodes; i++)); do wait_pod_ready "rank-$i" 300; done
  starts+=("$((($(date +%s%N) - t0) / 1000000))")
  if ((r < rounds)); then
    for ((i = 1; i <= nodes; i++)); do delete_pod "rank-$i"; done
  fi
done
start_ms=$(printf '%s\n' "${starts[@]}" | median)

for ((i = 1; i <= nodes; i++)); do agent_pod "$i" | kc apply -f - >/dev/null; done
for ((i = 1; i <= nodes; i++)); do wait_pod_ready "agent-$i" 300; done
# The baseline: Soft-RoCE on each node's igb PF, in its host netns (192.168.79.<i>).
declare -A pf_gid
for ((i = 1; i <= nodes; i++)); do
  pod_exec "agent-$i" sh -ec "
    pf=
    for d in /sys/class/net/*; do
      [ \"\$(basename \"\$(readlink \$d/device/driver 2>/dev/null)\")\" = igb ] && pf=\${d##*/}
    done
    [ -n \"\$pf\" ]
    /bin/ip addr add 192.168.79.$i/24 dev \$pf
    rdma link add rxp$i type rxe netdev \$pf" || fail "node $i: Soft-RoCE on the igb PF"
  pf_gid_index() {
    pod_exec "agent-$1" sh -c "
      d=/sys/class/infiniband/rxp$1/ports/1
      for g in \$d/gids/*; do
        [ \"\$(cat \$g)\" = 0000:0000:0000:0000:0000:ffff:c0a8:4f0$1 ] && echo \${g##*/} && exit 0
      done
      exit 1"
  }
  wait_until 30 "rxp$i's RoCE v2 GID" pf_gid_index "$i"
  pf_gid[$i]=$(pf_gid_index "$i")
done
roce_all_up
vf_ip2=$(pod_exec rank-2 ip -4 -o addr show dev eth1 | awk '{print $4}')
vf_ip2=${vf_ip2%/*}

pf_bw=() vf_bw=()
for ((r = 1; r <= rounds; r++)); do
  b=$(write_bw agent-1 agent-2 rxp1 "${pf_gid[1]}" rxp2 "${pf_gid[2]}" 192.168.79.2 "pf-$r.txt")
  [[ -z $b ]] || pf_bw+=("$b")
  b=$(write_bw rank-1 rank-2 rxe1 "$g1" rxe2 "$g2" "$vf_ip2" "vf-$r.txt")
  [[ -z $b ]] || vf_bw+=("$b")
done
pf_mbs=$(printf '%s\n' "${pf_bw[@]}" | median)
vf_mbs=$(printf '%s\n' "${vf_bw[@]}" | median)

mpi_rbac
[[ $g1 == "$g2" ]] || fail "rxe1's RoCE v2 GID is index $g1, rxe2's $g2"
MPI_UCX_ENV="UCX_IB_GID_INDEX=$g1 UCX_UD_VERBS_ETH_DGID_CHECK=n" \
  mpi_run mpi-bench rc_verbs,ud_verbs,self rank-1 rank-2 -- -b 512K -e 512K -n 10 -w 2 ||
  { cat mpi-bench.log >&2 && fail "the all-reduce failed"; }
busbw_gbs=$(mpi_rows mpi-bench | awk '$1 == 524288 {print $7}')

pf_runs=() pf_pairs=()
for ((r = 1; r <= rounds; r++)); do
  preflight "bench-$r" --
  ((pf_rc == 0)) || { cat "preflight-bench-$r.json" >&2 && fail "the pre-flight failed"; }
  pf_runs+=("$pf_seconds")
  pf_pairs+=("$(pf '[.pairs[].seconds] | add / length | . * 10 | round / 10' "bench-$r")")
done
pf_s=$(printf '%s\n' "${pf_runs[@]}" | median)
pf_pair_s=$(printf '%s\n' "${pf_pairs[@]}" | median)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "none"}'; }
busbw_mbs=$(awk -v g="$busbw_gbs" 'BEGIN {printf "%.2f", g * 1000}')
printf '%-44s %s\n' "VM accelerator" "$accel" \
  "cluster up, 2 nodes (s)" "$up_s" \
  "job start, both pods created -> both Ready (ms)" "$start_ms (rounds: ${starts[*]})" \
  "RDMA write, PF to PF, host netns (MB/s)" "$pf_mbs (rounds: ${pf_bw[*]:-none})" \
  "RDMA write, pod to pod on VFs (MB/s)" "$vf_mbs (rounds: ${vf_bw[*]:-none})" \
  "  VF / PF" "$(ratio "$vf_mbs" "$pf_mbs")" \
  "all-reduce bus bandwidth, 512 KiB (MB/s)" "$busbw_mbs" \
  "  all-reduce / pairwise VF write" "$(ratio "$busbw_mbs" "$vf_mbs")" \
  "pre-flight, 2 nodes, 2 pairs (s)" "$pf_s (rounds: ${pf_runs[*]})" \
  "  per pair (s)" "$pf_pair_s (rounds: ${pf_pairs[*]})"
printf '{"accel":"%s","up_s":%s,"job_start_ms":%s,"pf_write_mb_s":"%s","vf_write_mb_s":"%s","vf_over_pf":"%s","allreduce_busbw_mb_s":"%s","allreduce_over_vf":"%s","preflight_s":%s,"preflight_pair_s":%s}\n' \
  "$accel" "$up_s" "$start_ms" "$pf_mbs" "$vf_mbs" "$(ratio "$vf_mbs" "$pf_mbs")" "$busbw_mbs" \
  "$(ratio "$busbw_mbs" "$vf_mbs")" "$pf_s" "$pf_pair_s"
