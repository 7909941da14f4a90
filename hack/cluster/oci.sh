# shellcheck shell=bash
# oci_archive ROOTFS OUT NAME ENTRYPOINT...: writes an OCI image archive of one layer holding
# ROOTFS, named NAME (a full reference, e.g. rdmanet.local/pause:1), to OUT. Reproducible, like
# hack/image.sh's: sorted names, root ownership, mtime 0, gzip without a name. Sourced.
oci_archive() {
  local root=$1 out=$2 name=$3 work diff_id layer layer_size config config_size manifest \
    manifest_size entry
  shift 3
  entry=$(printf '"%s",' "$@")
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
  gzip -n -6 "$work/layer.tar"
  read -r layer layer_size < <(_oci_blob "$work/layer.tar.gz")
  cat >"$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z",
 "config":{"Entrypoint":[${entry%,}],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/busybox"]},
 "rootfs":{"type":"layers","diff_ids":["sha256:$diff_id"]},"history":[{"created_by":"hack/cluster"}]}
JSON
  read -r config config_size < <(_oci_blob "$work/config.json")
  cat >"$work/manifest.json" <<JSON
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
 "config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config","size":$config_size},
 "layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$layer","size":$layer_size}]}
JSON
  read -r manifest manifest_size < <(_oci_blob "$work/manifest.json")
  # containerd names an imported image by io.containerd.image.name.
  cat >"$work/oci/index.json" <<JSON
{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",
 "digest":"sha256:$manifest","size":$manifest_size,
 "annotations":{"io.containerd.image.name":"$name","org.opencontainers.image.ref.name":"${name##*:}"}}]}
JSON
  echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci/oci-layout"
  mkdir -p "$(dirname "$out")"
  tar -C "$work/oci" --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf "$work"
}
