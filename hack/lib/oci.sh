# shellcheck shell=bash
# The one OCI image archive writer of hack/: rdmanet's image (hack/image.sh) and the test
# cluster's pause, workload and Multus images (hack/cluster). Sourced.
#
# oci_archive ROOTFS OUT [OPTIONS] -- ENTRYPOINT...: writes an OCI image layout archive of one
# layer holding ROOTFS to OUT (atomically: OUT.tmp, then renamed). Reproducible: sorted names,
# numeric root ownership, mtime 0, gzip without a name, a fixed creation time, so the same tree
# gives the same digests. OPTIONS:
#   --name REF        containerd's io.containerd.image.name annotation (a full reference, e.g.
#                     rdmanet.local/pause:1); the ref.name annotation defaults to REF's tag
#   --ref NAME        the org.opencontainers.image.ref.name annotation (podman names the image
#                     by it)
#   --env VAR=VALUE   an Env entry of the config (repeatable)
#   --label KEY=VALUE a label of the config (repeatable)
#   --gzip LEVEL      the layer's gzip level (default 6)
#   --created-by TEXT the config's history entry (default: the caller's script name)
# Prints "<manifest digest> <layer size>" for the caller's report.
oci_archive() {
  local root=$1 out=$2 name='' ref='' level=6 created_by=${0##*/} work diff_id layer \
    layer_size config config_size manifest manifest_size env=() labels=() entry=() annotations=()
  shift 2
  while (($#)); do
    case $1 in
      --name) name=$2 && shift 2 ;;
      --ref) ref=$2 && shift 2 ;;
      --env) env+=("$2") && shift 2 ;;
      --label) labels+=("$2") && shift 2 ;;
      --gzip) level=$2 && shift 2 ;;
      --created-by) created_by=$2 && shift 2 ;;
      --) shift && entry=("$@") && break ;;
      *) echo "oci_archive: unknown option $1" >&2 && return 2 ;;
    esac
  done
  ((${#entry[@]})) || { echo "oci_archive: no entrypoint after --" >&2 && return 2; }
  [[ -n $ref || -z $name ]] || ref=${name##*:}
  work=$(mktemp -d)
  mkdir -p "$work/oci/blobs/sha256"
  _oci_blob() { # FILE -> moves it into blobs, prints "<digest> <size>"
    local d s
    d=$(sha256sum "$1" | cut -d' ' -f1)
    s=$(stat -c %s "$1")
    mv "$1" "$work/oci/blobs/sha256/$d"
    echo "$d $s"
  }
  tar -C "$root" --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -cf "$work/layer.tar" .
  diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
  gzip -n "-$level" "$work/layer.tar"
  read -r layer layer_size < <(_oci_blob "$work/layer.tar.gz")
  local labels_json=''
  ((${#labels[@]} == 0)) || labels_json=",\"Labels\":{$(_oci_kv_json "${labels[@]}")}"
  cat >"$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z",
 "config":{"Entrypoint":[$(_oci_list_json "${entry[@]}")],"Env":[$(_oci_list_json "${env[@]}")]$labels_json},
 "rootfs":{"type":"layers","diff_ids":["sha256:$diff_id"]},"history":[{"created_by":$(_oci_json "$created_by")}]}
JSON
  read -r config config_size < <(_oci_blob "$work/config.json")
  cat >"$work/manifest.json" <<JSON
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
 "config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config","size":$config_size},
 "layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$layer","size":$layer_size}]}
JSON
  read -r manifest manifest_size < <(_oci_blob "$work/manifest.json")
  [[ -z $name ]] || annotations+=("io.containerd.image.name=$name")
  [[ -z $ref ]] || annotations+=("org.opencontainers.image.ref.name=$ref")
  cat >"$work/oci/index.json" <<JSON
{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",
 "digest":"sha256:$manifest","size":$manifest_size,
 "annotations":{$(_oci_kv_json "${annotations[@]}")}}]}
JSON
  echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci/oci-layout"
  mkdir -p "$(dirname "$out")"
  tar -C "$work/oci" --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf "$work"
  echo "$manifest $layer_size"
}

# A JSON string of $1 (backslashes and quotes escaped; the callers pass no control characters).
_oci_json() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}
# The JSON list of the arguments' strings, without brackets.
_oci_list_json() {
  local a sep=''
  for a in "$@"; do printf '%s%s' "$sep" "$(_oci_json "$a")" && sep=,; done
}
# The JSON object members of KEY=VALUE arguments, without braces.
_oci_kv_json() {
  local a sep=''
  for a in "$@"; do printf '%s%s:%s' "$sep" "$(_oci_json "${a%%=*}")" "$(_oci_json "${a#*=}")" && sep=,; done
}
