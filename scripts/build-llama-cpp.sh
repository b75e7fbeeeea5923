#!/usr/bin/env bash
# Builds llama.cpp's llama-bench, the baseline of docs/benchmarks.md, from the
# llama.cpp sources that the llama-cpp-python sdist on PyPI carries
# (vendor/llama.cpp), for this CPU (GGML_NATIVE; AVX-512 without AMX where the
# CPU lists AMX, below). Prints the binary's path.
#
#   scripts/build-llama-cpp.sh
#   $(scripts/build-llama-cpp.sh) -m MODEL -p 512 -n 128 -t 2
#
# Cache: ${SKIFF_LLAMA_CPP_CACHE:-$HOME/.cache/skiff/llama.cpp}; a finished
# build is reused. Only for measuring: skiff neither links nor needs it.
set -euo pipefail

HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE="${SKIFF_LLAMA_CPP_CACHE:-$HOME/.cache/skiff/llama.cpp}"
PYTHON="${PYTHON:-python3}"
VERSION=0.3.36  # llama-cpp-python; its vendor/llama.cpp is the baseline's version
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
SDIST="llama_cpp_python-$VERSION.tar.gz"
SRC="$CACHE/llama_cpp_python-$VERSION/vendor/llama.cpp"
BUILD=build
ISA_FLAGS=(-DGGML_NATIVE=ON)
if grep -qw amx_tile /proc/cpuinfo 2>/dev/null; then
  # A VM may list AMX without granting its tile state: llama.cpp's native build
  # then dies of SIGILL in its AMX kernels (tileloadd, seen on a 2-vCPU Xeon VM).
  # Build for AVX-512 with VNNI and BF16, without AMX.
  BUILD=build-no-amx
  ISA_FLAGS=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON
             -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON)
fi
BENCH="$SRC/$BUILD/bin/llama-bench"

if [[ ! -x "$BENCH" ]]; then
  mkdir -p "$CACHE"
  if [[ ! -f "$CACHE/$SDIST" ]]; then
    echo "build-llama-cpp: downloading $SDIST from PyPI" >&2
    "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: -d "$CACHE" "llama-cpp-python==$VERSION" >&2
  fi
  echo "$SHA256  $CACHE/$SDIST" | sha256sum --check --quiet >&2
  tar -xzf "$CACHE/$SDIST" -C "$CACHE"
  echo "build-llama-cpp: building llama-bench (a few minutes)" >&2
  cmake -S "$SRC" -B "$SRC/$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${ISA_FLAGS[@]}" -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF >&2
  ninja -C "$SRC/$BUILD" llama-bench >&2
fi
echo "$BENCH"
