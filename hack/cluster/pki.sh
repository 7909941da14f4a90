#!/usr/bin/env bash
# Makes the cluster's certificates, service-account keys and kubeconfigs under <state>/pki, once
# (pki.sh [VM-NODE...]: also a kubelet cert for each VM node named):
# a later `up` reuses them (the keys never leave the 0700 state dir).
#
# One CA signs everything: the API server's serving cert (for the node address, 127.0.0.1 and the
# kubernetes Service's first address), client certs for the admin (system:masters), the
# controller-manager, the scheduler, the kubelet (system:node:<node>, so the Node authorizer and
# NodeRestriction apply as on a real node) and the API server's own client to kubelets. Plus an
# key pair that signs and checks service-account tokens. Keys are ECDSA P-256: RSA key
# generation took seconds each on a loaded machine, and `up` after `down` makes them anew.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

umask 077
mkdir -p "$pki"
cd "$pki"

genkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }

# cert NAME SUBJECT [SANS]: a key and a CA-signed cert for NAME, unless it exists. Client certs
# name the user in CN and the group in O; SANS (subjectAltName syntax) makes a serving cert.
cert() {
  local name=$1 subj=$2 sans=${3:-}
  [[ -f $name.crt ]] && return 0
  genkey "$name.key"
  openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [[ -n $sans ]]; then
      echo "extendedKeyUsage=serverAuth,clientAuth"
      echo "subjectAltName=$sans"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
    -sha256 -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

if [[ ! -f ca.crt ]]; then
  genkey ca.key
  openssl req -x509 -new -key ca.key -out ca.crt -days 3650 -subj "/CN=rdmanet-cluster-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
fi
# The Service network's first address is the kubernetes Service's ClusterIP.
svc_ip=${service_cidr%.*}.1
cert apiserver "/CN=kube-apiserver" \
  "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost,IP:127.0.0.1,IP:$apiserver_ip,IP:$svc_ip"
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
cert admin "/O=system:masters/CN=rdmanet-cluster-admin"
cert controller-manager "/CN=system:kube-controller-manager"
cert scheduler "/CN=system:kube-scheduler"
cert kubelet "/O=system:nodes/CN=system:node:$node_name"
if [[ ! -f sa.key ]]; then
  genkey sa.key
  openssl pkey -in sa.key -pubout -out sa.pub
fi

# kubeconfig_for FILE NAME: a kubeconfig for the client cert NAME.crt, with the certs embedded so it
# stays valid if copied.
kubeconfig_for() {
  local file=$1 name=$2
  cat >"$file" <<KC
apiVersion: v1
kind: Config
clusters:
- name: rdmanet
  cluster:
    server: https://$apiserver_ip:$apiserver_port
    certificate-authority-data: $(base64 -w0 ca.crt)
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 "$name.crt")
    client-key-data: $(base64 -w0 "$name.key")
contexts:
- name: rdmanet
  context: {cluster: rdmanet, user: $name}
current-context: rdmanet
KC
}
# Written every time: they are cheap, and must name the CA the certificates above chain to.
for n in controller-manager scheduler kubelet; do
  kubeconfig_for "$n.kubeconfig" "$n"
done
kubeconfig_for "$kubeconfig" admin
# The VM nodes' kubelets (vmnodes.sh names them as arguments): system:node:<node> each.
for n in "$@"; do
  cert "kubelet-$n" "/O=system:nodes/CN=system:node:$n"
  kubeconfig_for "kubelet-$n.kubeconfig" "kubelet-$n"
done
