#!/usr/bin/env bash
# Bounded libFuzzer runs of the parsers' fuzz targets (issues 4 and 29), as ctests.
# libFuzzer needs clang, while the main build uses g++; so `build` configures a separate clang
# build with every library instrumented for coverage (fuzzer-no-link) plus ASan/UBSan and builds
# only the fuzz targets, and `run` runs one target for its share of FUZZ_SECONDS (default 120,
# split evenly across the COUNT targets, at least 5 s each) from its seed corpus. New inputs go
# to a scratch corpus in the build dir; a crash fails the test and leaves its input in
# BUILD_DIR/fuzz_artifacts.
#   run_bounded.sh build SOURCE_DIR BUILD_DIR TARGET...
#   run_bounded.sh run SOURCE_DIR BUILD_DIR TARGET CORPUS COUNT
set -euo pipefail
verb=${1:?build or run}
src=${2:?source dir}
build=${3:?build dir}
shift 3
case $verb in
  build)
    if [[ ! -f $build/build.ninja ]]; then
      launcher=()
      if command -v ccache >/dev/null; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
      fi
      CC=clang CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DRDMANET_FUZZ=ON "${launcher[@]}" \
        -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
    fi
    cmake --build "$build" --target "$@" -j"$(nproc)" | tail -n 1
    ;;
  run)
    target=${1:?target}
    seeds=${2:?corpus}
    count=${3:?count}
    seconds=$((${FUZZ_SECONDS:-120} / count))
    ((seconds >= 5)) || seconds=5
    bin=$(find "$build/tests" -type f -name "$target" -perm -u+x | head -n 1)
    [[ -n $bin ]] || { echo "no $target in $build (run the fuzz_clang_build test first)"; exit 1; }
    scratch=$build/fuzz_corpus/$target
    mkdir -p "$scratch" "$build/fuzz_artifacts"
    # Undefined behaviour is a finding too: stop at the first report, as at a crash.
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build/fuzz_artifacts/$target-" "$scratch" "$seeds"
    ;;
  *)
    echo "usage: $0 build|run ..." >&2
    exit 2
    ;;
esac
