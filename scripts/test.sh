#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd "${SKIFF_BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)"
