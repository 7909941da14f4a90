# shellcheck shell=bash
# shellcheck disable=SC2154 # ns, workload_image and kc are lib.sh's, sourced first
# An MPI job launched the way the MPI operator launches one, for the VM cluster's tests: the rank
# pods run (sleeping) first, then a launcher pod runs mpirun, whose remote shell agent is
# kubexec (hack/cluster/images.sh): `kubectl exec RANK -- sh -c "orted ..."` through the API
# server with the launcher's own service account, allowed only to exec into pods of the test's
# namespace. No ssh, no keys. The program is the workload image's allreduce_perf (nccl-tests'
# all_reduce_perf's table, every result checked). Sourced by multinode.sh after lib.sh.
#
#   mpi_rbac                               the launcher's ServiceAccount, Role and RoleBinding
#   mpi_start NAME TLS RANK_POD... -- ARGS a launcher pod NAME: mpirun over the rank pods (one
#                                          rank each) with UCX transports TLS, allreduce_perf
#                                          ARGS (MPI_UCX_ENV="VAR=VALUE ...": more variables for
#                                          the ranks; MPI_UCX_NET_DEVICES: UCX's devices, all by
#                                          default; MPI_MCA="PARAM=VALUE ...": more --mca)
#   mpi_wait NAME                          waits for it to end, its log in NAME.log; returns its
#                                          exit status (and 124 on a time-out, MPI_TIMEOUT s)
#   mpi_run NAME TLS RANK_POD... -- ARGS   both
#   mpi_logged NAME TEXT                   NAME's log so far has a line starting with TEXT
#   mpi_busbw NAME                         the average bus bandwidth NAME.log reports (GB/s)
#   mpi_rows NAME                          the table's rows: size count type redop us algbw
#                                          busbw wrong
mpi_rbac() {
  kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: mpi-launcher, namespace: $ns}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: mpi-launcher, namespace: $ns}
rules:
# kubectl exec reads the pod, then opens its exec subresource.
- {apiGroups: [""], resources: [pods], verbs: [get]}
- {apiGroups: [""], resources: [pods/exec], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: mpi-launcher, namespace: $ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: mpi-launcher}
subjects: [{kind: ServiceAccount, name: mpi-launcher, namespace: $ns}]
YAML
}

# The launcher's mpirun: one rank per pod, the daemons all started by the launcher itself (no tree
# spawn: the ranks' pods have no right to exec), Open MPI's own wiring over the pods' eth0, and
# the ranks' traffic through UCX alone (pml ucx: a UCX that cannot start fails the job rather
# than falling back to another transport), over the transports TLS.
mpi_start() {
  local name=$1 tls=$2 hosts='' args=() extra=() vars=() v a
  shift 2
  while (($#)) && [[ $1 != -- ]]; do
    hosts+=${hosts:+,}$1:1
    shift
  done
  [[ ${1:-} == -- ]] && shift
  read -ra vars <<<"${MPI_UCX_ENV:-}"
  for v in "${vars[@]}"; do extra+=(-x "$v"); done
  read -ra vars <<<"${MPI_MCA:-}"
  for v in "${vars[@]}"; do extra+=(--mca "${v%%=*}" "${v#*=}"); done
  for a in mpirun.openmpi --allow-run-as-root -np "$(tr , '\n' <<<"$hosts" | grep -c .)" \
    --host "$hosts" --mca plm_rsh_agent kubexec --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include eth0 --mca pml ucx --mca btl self --mca osc ucx \
    -x "UCX_TLS=$tls" -x UCX_NET_DEVICES "${extra[@]}" allreduce_perf "$@"; do
    args+=("\"$a\"")
  done
  kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $ns}
spec:
  serviceAccountName: mpi-launcher
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: launcher
    image: $workload_image
    imagePullPolicy: Never
    env: [{name: UCX_NET_DEVICES, value: "${MPI_UCX_NET_DEVICES:-all}"}]
    command: [$(IFS=, && echo "${args[*]}")]
YAML
}

mpi_wait() {
  local name=$1 phase deadline=$((SECONDS + ${MPI_TIMEOUT:-600}))
  while :; do
    phase=$(kc -n "$ns" get pod "$name" -o 'jsonpath={.status.phase}')
    [[ $phase == Succeeded || $phase == Failed ]] && break
    if ((SECONDS >= deadline)); then
      kc -n "$ns" logs "$name" >"$name.log" 2>&1 || true
      return 124
    fi
    sleep 1
  done
  kc -n "$ns" logs "$name" >"$name.log" 2>&1 || true
  [[ $phase == Succeeded ]]
}

mpi_run() {
  mpi_start "$@"
  mpi_wait "$1"
}

mpi_logged() { kc -n "$ns" logs "$1" 2>/dev/null | grep -q "^$2"; }
mpi_busbw() { sed -n 's/^# Avg bus bandwidth : //p' "$1.log"; }
mpi_rows() { awk '$1 ~ /^[0-9]+$/ && NF == 8' "$1.log"; }
