#!/usr/bin/env bash
# Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler as host processes and
# waits until the API server is ready. Needs pki.sh's files and the node's bridge address
# (network.sh): the API server listens on, and advertises, the node's address.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=hack/cluster/gates.sh
. "$cluster_dir/gates.sh"

k8s=$(k8s_bin)
etcd_bin=$(bin_dir etcd)/etcd
mkdir -p "$state_dir/etcd"
chmod 700 "$state_dir/etcd"

# etcd on loopback only. --unsafe-no-fsync: a test cluster's data need not survive a power
# loss, and fsyncs on a shared, loaded disk make every write slow.
start_daemon etcd "$etcd_bin" --name rdmanet --data-dir "$state_dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_client_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_client_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "rdmanet=http://127.0.0.1:$etcd_peer_port" \
  --unsafe-no-fsync --log-level warn
wait_for 30 etcd curl -fsS "http://127.0.0.1:$etcd_client_port/health"

# NodeRestriction with the Node authorizer: the kubelet may only touch its own Node and pods,
# as on a real cluster (a stand-in kubelet could do anything).
start_daemon kube-apiserver "$k8s/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$etcd_client_port" \
  --bind-address "$apiserver_ip" --advertise-address "$apiserver_ip" --secure-port "$apiserver_port" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP \
  --service-account-issuer https://kubernetes.default.svc \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-cluster-ip-range "$service_cidr" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --allow-privileged=true --profiling=false \
  --feature-gates "$(gates kube-apiserver)" --runtime-config "$(runtime_config)"
wait_for 120 kube-apiserver curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" \
  --key "$pki/admin.key" "https://$apiserver_ip:$apiserver_port/readyz"

# No serving port for either (--secure-port 0): nothing scrapes them, and fixed ports could
# clash with other software on the machine.
start_daemon kube-controller-manager "$k8s/kube-controller-manager" \
  --kubeconfig "$pki/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$pki/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$pki/controller-manager.kubeconfig" \
  --secure-port 0 --leader-elect=false --use-service-account-credentials \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --feature-gates "$(gates kube-controller-manager)"
start_daemon kube-scheduler "$k8s/kube-scheduler" \
  --kubeconfig "$pki/scheduler.kubeconfig" \
  --authentication-kubeconfig "$pki/scheduler.kubeconfig" \
  --authorization-kubeconfig "$pki/scheduler.kubeconfig" \
  --secure-port 0 --leader-elect=false \
  --feature-gates "$(gates kube-scheduler)"
