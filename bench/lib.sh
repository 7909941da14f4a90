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

# scale_topology N [SHAPE]: the simulated node the scaling benches use (hack/simnode topology
# JSON): two sockets, each with two switches holding a dual-port NIC and a GPU, so 8 PFs with N VFs
# each, with RDMA devices in SHAPE (tests/simnode/scale_shapes.h, whose tests count the same
# node's sysfs operations):
#   mlx5              an RDMA device per function, VFs included, as mlx5 makes them (default)
#   mlx5-no-vf-rdma   mlx5 VFs with no RDMA device (mlx5_ib not loaded for them)
#   rxe               Soft-RoCE on every PF and VF netdev and on a macvlan/ipvlan upper of each
#   vf-rdma-in-pods   exclusive RDMA netns mode: the VFs' RDMA devices are in pods' netns
#   vf-rdma-no-class  the VFs' RDMA devices sit under their functions but miss the class
scale_shapes=(mlx5 mlx5-no-vf-rdma rxe vf-rdma-in-pods vf-rdma-no-class)
scale_topology() {
  local n=$1 shape=${2:-mlx5} keys
  case $shape in
    mlx5) keys='' ;;
    mlx5-no-vf-rdma) keys=', "vf_rdma": false' ;;
    rxe) keys=', "rdma_kind": "rxe"' ;;
    vf-rdma-in-pods) keys=', "vf_rdma_at": "other-netns"' ;;
    vf-rdma-no-class) keys=', "vf_rdma_at": "no-class"' ;;
    *) echo "scale_topology: unknown shape $shape (${scale_shapes[*]})" >&2; return 1 ;;
  esac
  nic() { echo "{\"switch\": {\"downstream\": [{\"nic\": {\"name\": \"$1\", \"ports\": 2,
    \"vfs_per_port\": $n, \"total_vfs\": $n$keys}}, {\"gpu\": {}}]}}"; }
  cat <<JSON
{"name": "scale-8x$n-$shape", "host_bridges": [
  {"domain": 0, "bus": "0x00", "numa_node": 0, "root_ports": [$(nic ens1), $(nic ens2)]},
  {"domain": 0, "bus": "0x80", "numa_node": 1, "root_ports": [$(nic ens3), $(nic ens4)]}]}
JSON
}
