#!/usr/bin/env bash
# Configures (once) and builds skiff in ./build (Release): the given targets, or
# everything. Fast when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${SKIFF_BUILD_DIR:-build}
if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" ${1:+--target "$@"} >&2
