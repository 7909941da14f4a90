#!/usr/bin/env bash
# A bounded libFuzzer run over netconf parsing and result conversion (issue 4), as a ctest.
# libFuzzer needs clang, while the main build uses g++; so this configures a separate clang
# build with every library instrumented for coverage (fuzzer-no-link) plus ASan/UBSan, builds
# only the fuzz target, and runs it for FUZZ_SECONDS (default 30) from the seed corpus.
#   run_bounded.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${1:?source dir}
build=${2:?build dir}
seconds=${FUZZ_SECONDS:-30}
if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRDMANET_FUZZ=ON -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
fi
cmake --build "$build" --target cni_netconf_fuzz -j"$(nproc)" | tail -n 1
corpus=$build/fuzz_corpus
mkdir -p "$corpus"
"$build/tests/cni/cni_netconf_fuzz" -max_total_time="$seconds" -timeout=5 -print_final_stats=1 \
  "$corpus" "$src/tests/cni/fuzz/corpus"
