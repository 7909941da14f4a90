#!/usr/bin/env bash
# Builds rdmanet and runs every test label (unit, netns, integration, vm) on this machine.
# A fresh Debian 12 machine needs nothing else: dependencies are installed first.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
hack/build.sh
build_dir=${BUILD_DIR:-build}
# Tests that boot the VM or time the kernel are RUN_SERIAL in their CMakeLists; the rest share
# the two cores.
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 900 "$@"
