#!/usr/bin/env bash
# Creates the Python environment that the tools/*.py scripts run in
# (transformers, torch, gguf, ...): a venv outside the repository, by default
# /work/refenv, or $SKIFF_REFENV. Idempotent: an existing venv is reused and
# pip only installs what is missing. The tests never need it.
#
#   scripts/setup-reference-env.sh && /work/refenv/bin/python tools/make_hf_golden.py
set -euo pipefail

ENV_DIR="${SKIFF_REFENV:-/work/refenv}"
PYTHON="${PYTHON:-python3}"

if [[ ! -x "$ENV_DIR/bin/python" ]]; then
  # Debian's python3 needs python3-venv for this; pyenv's ships it.
  "$PYTHON" -m venv "$ENV_DIR" 2>/dev/null || {
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    "$PYTHON" -m venv "$ENV_DIR"
  }
fi
# PyPI's default torch wheel (CUDA-enabled on Linux; runs on CPU as well).
# transformers >= 5 writes `rope_parameters`, which the committed configs use;
# it needs accelerate to load a GGUF.
"$ENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
  numpy gguf torch accelerate 'transformers>=5' safetensors sentencepiece jinja2 tokenizers protobuf
"$ENV_DIR/bin/python" - <<'EOF'
from importlib.metadata import version
import accelerate, gguf, numpy, safetensors, sentencepiece, torch, transformers
print("reference env ok:", ", ".join(f"{p} {version(p)}" for p in ("torch", "transformers", "numpy", "gguf")))
EOF
