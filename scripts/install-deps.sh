#!/usr/bin/env bash
# Installs the Debian packages skiff needs to build and test. Idempotent: does
# nothing (and touches no network) when everything is already installed.
set -euo pipefail
PACKAGES=(build-essential cmake ninja-build pkg-config libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
          libutf8proc-dev libomp-dev libhwy-dev
          # the server's HTTP layer (Beast, Asio; header-only) and bench-serve's HTTP client
          libboost1.81-dev libcpp-httplib-dev
          # the sanitizer builds and fuzz harnesses (scripts/sanitize.sh, fuzz.sh):
          # clang, its sanitizer and libFuzzer runtimes, and libomp's TSan tool (Archer)
          clang-14 libclang-rt-14-dev libomp-14-dev
          # SIMDe: the AVX-512 kernels' tests on CPUs without AVX-512 (CMakeLists.txt)
          libsimde-dev
          # the chat page's browser tests (tests/server/test_webui.py): headless Chromium
          chromium chromium-driver)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
