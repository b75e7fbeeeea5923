#!/usr/bin/env bash
# Puts llama.cpp's sample GBNF grammars (the grammars/ folder of the
# llama.cpp that the llama-cpp-python sdist on PyPI carries, the same sdist as
# scripts/build-llama-cpp.sh) into a cache folder and prints the folder. The
# GBNF tests (tests/grammar/gbnf_test.cpp) read them from SKIFF_LLAMA_GRAMMARS;
# they are not copied into this repository.
#
#   export SKIFF_LLAMA_GRAMMARS=$(scripts/fetch-llama-grammars.sh)
#
# Cache: ${SKIFF_LLAMA_CPP_CACHE:-$HOME/.cache/skiff/llama.cpp}; the sdist
# already there (from build-llama-cpp.sh) is reused after its hash is checked.
set -euo pipefail

HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE="${SKIFF_LLAMA_CPP_CACHE:-$HOME/.cache/skiff/llama.cpp}"
PYTHON="${PYTHON:-python3}"
VERSION=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
SDIST="llama_cpp_python-$VERSION.tar.gz"
OUT="$CACHE/grammars-$VERSION"

if [[ ! -f "$OUT/json.gbnf" ]]; then
  mkdir -p "$CACHE"
  if [[ ! -f "$CACHE/$SDIST" ]]; then
    echo "fetch-llama-grammars: downloading $SDIST from PyPI" >&2
    "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: -d "$CACHE" "llama_cpp_python==$VERSION" >&2
  fi
  echo "$SHA256  $CACHE/$SDIST" | sha256sum --check --quiet >&2
  # Unpacked beside the cache and moved into place whole, so that an
  # interrupted run leaves no half folder behind.
  TMP=$(mktemp -d "$CACHE/grammars.XXXXXX")
  trap 'rm -rf "$TMP"' EXIT
  tar -xzf "$CACHE/$SDIST" -C "$TMP" "llama_cpp_python-$VERSION/vendor/llama.cpp/grammars"
  rm -rf "$OUT"
  mv "$TMP/llama_cpp_python-$VERSION/vendor/llama.cpp/grammars" "$OUT"
fi
echo "$OUT"
