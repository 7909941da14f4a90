#!/usr/bin/env bash
# Configures and builds rdmanet into $BUILD_DIR (default: build/). Extra args go to cmake
# configure, e.g. hack/build.sh -DRDMANET_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
if [[ ! -f $build_dir/build.ninja ]] || (($#)); then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$build_dir" -j"$(nproc)"
