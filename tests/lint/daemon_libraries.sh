#!/usr/bin/env bash
# lint: rdmanet-device-plugin loads no HTTP/TLS stack at start. libcurl is dlopened by the DRA
# front only (common/kube/curl_library.h); linking it, or OpenSSL or GnuTLS, would map its whole
# dependency tree into every daemon of the default device-plugin mode, constructors and all.
# Checks the binary's full library closure as the loader resolves it (ldd), not only NEEDED.
#   daemon_libraries.sh BINARY
set -euo pipefail
bin=${1:?usage: daemon_libraries.sh BINARY}
libs=$(ldd "$bin" | awk '{print $1}')
[[ $libs == *libc.so* ]] || {
  echo "daemon_libraries: ldd $bin listed no libc: $libs" >&2
  exit 1
}
bad=$(grep -E '^lib(curl|curl-gnutls|ssl|crypto|gnutls)\.so' <<<"$libs" || true)
if [[ -n $bad ]]; then
  echo "daemon_libraries: $bin loads $(tr '\n' ' ' <<<"$bad")at start; libcurl is to be" \
    "dlopened (common/kube/curl_library.h), not linked" >&2
  exit 1
fi
echo "daemon_libraries: $(wc -l <<<"$libs") libraries, no libcurl, OpenSSL or GnuTLS"
