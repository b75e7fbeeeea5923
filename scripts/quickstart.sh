#!/usr/bin/env bash
# Installs dependencies, builds, and generates text from the stories260K model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh skiff
MODEL=${1:-../shared/models/derived/stories260K-f32.gguf}
./build/skiff run -m "$MODEL" -p "Once upon a time" -n 128 --temp 0.8 --seed 42
