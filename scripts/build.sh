#!/usr/bin/env bash
# Configures (once) and builds skiff: the given targets, or everything. Fast
# when nothing changed. SKIFF_SANITIZE=address builds with clang, ASan + UBSan
# and the fuzz harnesses in ./build-asan; SKIFF_SANITIZE=thread with TSan in
# ./build-tsan; unset, Release in ./build. SKIFF_PYTHON=/path/to/python (one
# with nanobind, as scripts/setup-test-env.sh makes) also builds the Python
# extension and its tests (python.pytest) in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG=${SKIFF_CLANG:-clang++-14}
case "${SKIFF_SANITIZE:-}" in
  "") BUILD_DIR=${SKIFF_BUILD_DIR:-build}; FLAGS=() ;;
  address) BUILD_DIR=${SKIFF_BUILD_DIR:-build-asan}
           FLAGS=(-DCMAKE_CXX_COMPILER="$CLANG" -DSKIFF_SANITIZE=address -DSKIFF_FUZZ=ON) ;;
  thread) BUILD_DIR=${SKIFF_BUILD_DIR:-build-tsan}
          FLAGS=(-DCMAKE_CXX_COMPILER="$CLANG" -DSKIFF_SANITIZE=thread) ;;
  *) echo "build.sh: SKIFF_SANITIZE must be address or thread, not '$SKIFF_SANITIZE'" >&2; exit 2 ;;
esac
PYTHON_EXT=""
[[ -n "${SKIFF_PYTHON:-}" && -z "${SKIFF_SANITIZE:-}" ]] && PYTHON_EXT="$SKIFF_PYTHON"
if [[ -n "$PYTHON_EXT" ]]; then
  FLAGS+=(-DSKIFF_PYTHON=ON -DPython_EXECUTABLE="$PYTHON_EXT")
fi
if [[ ! -f $BUILD_DIR/build.ninja ]] ||
   { [[ -n "$PYTHON_EXT" ]] && ! grep -q '^SKIFF_PYTHON:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; }; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${FLAGS[@]}" >&2
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" ${1:+--target "$@"} >&2
