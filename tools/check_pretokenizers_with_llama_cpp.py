#!/usr/bin/env python3
"""Compares tests/tokenizer/data/pretokenizer_splits.json (made by
tools/make_pretokenizer_golden.py with Python's `regex`) with llama.cpp's own
split: for each type, the regex list llama.cpp's vocabulary loader gives its
tokenizer.ggml.pre name (read from src/llama-vocab.cpp), run by llama.cpp's
unicode_regex_split (src/unicode.cpp, compiled here into a small program).

It needs a llama.cpp source tree: by default the one scripts/build-llama-cpp.sh
caches, or $LLAMA_CPP_SRC. Run by hand:
    python3 tools/check_pretokenizers_with_llama_cpp.py [TYPE_NAME...]
"""
import glob
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests/tokenizer/data/pretokenizer_splits.json"
CACHED = os.path.expanduser("~/.cache/skiff/llama.cpp/llama_cpp_python-*/vendor/llama.cpp")

# Where llama.cpp runs a regex otherwise than it reads, skiff follows the
# regex (what Hugging Face's tokenizers do, and what llama.cpp's test vectors
# hold): its collapsed \p{Lu}/\p{Ll} match any letter, and it runs Tiny Aya's
# digit regex as the AFMoE digit split.
KNOWN = {
    "tiny_aya": "llama.cpp splits no words by letter case, and digits as AFMoE's split",
    "youtu": "llama.cpp splits no words by letter case",
}

HARNESS = r"""
#include "unicode.h"
#include <iostream>
#include <sstream>
// argv: the regexes; stdin: texts separated by \x1e. Prints each text's words
// separated by \x1f, texts by \x1e.
int main(int argc, char** argv) {
  std::vector<std::string> regexes(argv + 1, argv + argc);
  std::stringstream in;
  in << std::cin.rdbuf();
  const std::string all = in.str();
  for (size_t start = 0; start <= all.size();) {
    size_t end = all.find('\x1e', start);
    if (end == std::string::npos) end = all.size();
    const auto words = unicode_regex_split(all.substr(start, end - start), regexes, false);
    for (size_t i = 0; i < words.size(); ++i) std::cout << (i ? "\x1f" : "") << words[i];
    std::cout << '\x1e';
    start = end + 1;
  }
}
"""


def c_strings(code):
    """The C string literals of a piece of C++, decoded (comments skipped)."""
    code = re.sub(r"//[^\n]*", "", code)
    return [bytes(s, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
            for s in re.findall(r'"((?:[^"\\]|\\.)*)"', code)]


def llama_cpp_lists(vocab_cpp):
    """tokenizer.ggml.pre name -> llama.cpp's regex list for it."""
    kinds = {}
    for names, kind in re.findall(r'((?:tokenizer_pre == "[^"]+"\s*\|\|\s*)*tokenizer_pre == "[^"]+")\)\s*\{\s*'
                                  r'pre_type = LLAMA_VOCAB_PRE_TYPE_(\w+);', vocab_cpp):
        for name in re.findall(r'"([^"]+)"', names):
            kinds[name] = kind
    lists = {}
    for cases, body in re.findall(r'((?:case LLAMA_VOCAB_PRE_TYPE_\w+:\s*)+)(?://[^\n]*\n\s*)*regex_exprs = \{(.*?)\};',
                                  vocab_cpp, re.S):
        for kind in re.findall(r'LLAMA_VOCAB_PRE_TYPE_(\w+)', cases):
            lists[kind] = c_strings(body)
    default = re.search(r'default:\s*(?://[^\n]*\n\s*)*regex_exprs = \{(.*?)\};', vocab_cpp, re.S)
    if default:
        lists["DEFAULT"] = c_strings(default.group(1))
    return {name: lists[kind] for name, kind in kinds.items() if kind in lists}


def main():
    src = os.environ.get("LLAMA_CPP_SRC") or next(iter(sorted(glob.glob(CACHED))), None)
    if not src:
        sys.exit("no llama.cpp source: run scripts/build-llama-cpp.sh or set LLAMA_CPP_SRC")
    src = pathlib.Path(src) / "src"
    lists = llama_cpp_lists((src / "llama-vocab.cpp").read_text(encoding="utf-8"))
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))["types"]
    wanted = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        harness = pathlib.Path(tmp) / "split.cpp"
        harness.write_text(HARNESS)
        binary = pathlib.Path(tmp) / "split"
        subprocess.run(["g++", "-std=c++17", "-O1", f"-I{src}", str(harness), str(src / "unicode.cpp"),
                        str(src / "unicode-data.cpp"), "-o", str(binary)], check=True)
        failed = 0
        for t in golden:
            name = t["name"]
            if (wanted and name not in wanted) or name not in lists:
                if not wanted and name not in lists:
                    print(f"{name}: llama.cpp lists no regexes for it here (a default or non-BPE kind)")
                continue
            texts = [s[0] for s in t["splits"]]
            run = subprocess.run([str(binary), *lists[name]], input="\x1e".join(texts).encode(), capture_output=True)
            # llama.cpp makes an empty word where an empty match cuts; it tokenizes to nothing.
            got = [[w for w in text.split("\x1f") if w] for text in run.stdout.decode().split("\x1e")[:-1]]
            bad = [(s[0], s[1], g) for s, g in zip(t["splits"], got) if s[1] != g]
            failed += bool(bad) and name not in KNOWN
            known = f" (known: {KNOWN[name]})" if bad and name in KNOWN else ""
            print(f"{name}: {len(texts) - len(bad)}/{len(texts)} texts split alike{known}")
            for text, want, g in bad[:2]:
                print(f"  {text[:60]!r}\n    golden    {want[:10]}\n    llama.cpp {g[:10]}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
