# shellcheck shell=bash
# Shared by the bench scripts (sourced, not run).

# wait_for SECONDS COMMAND...: polls COMMAND every 20 ms until it succeeds; 1 after SECONDS.
wait_for() {
  local deadline=$(($(date +%s%N) + $1 * 1000000000))
  shift
  until "$@"; do
    (($(date +%s%N) < deadline)) || return 1
    sleep 0.02
  done
}

# scale_topology N: the simulated node the scaling benches use (hack/simnode topology JSON):
# two sockets, each with two switches holding a dual-port NIC and a GPU, so 8 PFs with N VFs
# each.
scale_topology() {
  local n=$1
  nic() { echo "{\"switch\": {\"downstream\": [{\"nic\": {\"name\": \"$1\", \"ports\": 2,
    \"vfs_per_port\": $n, \"total_vfs\": $n}}, {\"gpu\": {}}]}}"; }
  cat <<JSON
{"name": "scale-8x$n", "host_bridges": [
  {"domain": 0, "bus": "0x00", "numa_node": 0, "root_ports": [$(nic ens1), $(nic ens2)]},
  {"domain": 0, "bus": "0x80", "numa_node": 1, "root_ports": [$(nic ens3), $(nic ens4)]}]}
JSON
}
