#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/*.cpp: clang, ASan + UBSan, in
# ./build-asan) and runs each one from its seeds (fuzz/corpus/<name>/).
#
#   scripts/fuzz.sh                  # every harness for 60 s
#   scripts/fuzz.sh 600              # every harness for 10 minutes
#   scripts/fuzz.sh -runs=1000000    # every harness for a million inputs
#   scripts/fuzz.sh 30 jinja gguf    # some harnesses only
#
# Harnesses run SKIFF_FUZZ_JOBS at a time (default: the cores). What each
# finds grows in build-asan/fuzz/corpus/<name>/ (the committed seeds are never
# written); a crash, leak, sanitizer report, timeout (10 s an input) or input
# past 2 GB of memory leaves its input in build-asan/fuzz/crashes/<name>/ and
# the run fails. A crash input replays with build-asan/fuzz/fuzz_<name> FILE.
# The log of each harness is build-asan/fuzz/<name>.log; the last lines of
# each, with executions and coverage, are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT="${1:-60}"
shift || true
if [[ $LIMIT == -runs=* ]]; then BOUND=("$LIMIT"); else BOUND=(-max_total_time="$LIMIT"); fi
HARNESSES=("$@")
if ((${#HARNESSES[@]} == 0)); then
  for src in fuzz/*.cpp; do
    name=$(basename "$src" .cpp)
    [[ $name == fuzz_support ]] || HARNESSES+=("$name")
  done
fi
OUT=${SKIFF_BUILD_DIR:-build-asan}/fuzz
SKIFF_SANITIZE=address scripts/build.sh "${HARNESSES[@]/#/fuzz_}"

dict_of() {  # libFuzzer dictionaries: Jinja's syntax, JSON's for the JSON readers, constraints' for grammars
  case "$1" in
    jinja) echo fuzz/jinja.dict ;;
    grammar_compile) echo fuzz/grammar.dict ;;
    hf_config | safetensors | safetensors_index | tokenizer_json | server_requests) echo fuzz/json.dict ;;
  esac
}

run_one() {  # leaves the harness's exit status in $OUT/<name>.status
  local name=$1 dict status=0
  mkdir -p "$OUT/corpus/$name" "$OUT/crashes/$name"
  dict=$(dict_of "$name")
  # -rss_limit_mb: a reader must refuse what would need more than 2 GB.
  "$OUT/fuzz_$name" "${BOUND[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    ${dict:+-dict="$dict"} -artifact_prefix="$OUT/crashes/$name/" \
    "$OUT/corpus/$name" "fuzz/corpus/$name" >"$OUT/$name.log" 2>&1 || status=$?
  echo "$status" >"$OUT/$name.status"
}

JOBS=${SKIFF_FUZZ_JOBS:-$(nproc)}
for name in "${HARNESSES[@]}"; do
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
  run_one "$name" &
done
wait
failed=()
for name in "${HARNESSES[@]}"; do
  stats=$(grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$OUT/$name.log" | tr '\n' ' ')
  cov=$(grep -E '^#[0-9]+.*(cov|DONE)' "$OUT/$name.log" | tail -1)
  echo "fuzz $name: $stats| $cov"
  [[ $(cat "$OUT/$name.status") == 0 ]] || failed+=("$name")
done
if ((${#failed[@]})); then
  for name in "${failed[@]}"; do
    echo "=== fuzz $name FAILED: tail of $OUT/$name.log ===" >&2
    tail -40 "$OUT/$name.log" >&2
  done
  exit 1
fi
echo "fuzz: ${#HARNESSES[@]} harnesses, 0 crashes"
