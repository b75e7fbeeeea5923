#!/usr/bin/env python3
"""Makes tests/tokenizer/data/pretokenizer_splits.json: how each skiff
pre-tokenizer type splits a set of texts, computed independently of skiff's
C++ with the PyPI `regex` module from the regex strings in
src/tokenizer/pretokenizer.cpp (llama.cpp's lists), each type under the
first tokenizer.ggml.pre name that selects it (pretokenizer_names.cpp).

Splitting follows llama.cpp's unicode_regex_split: each regex runs over each
word the previous one left, matches and the stretches between them become
words, and an empty match only cuts. "\\p{AFMoE_digits}" is no regex but
llama.cpp's name for a custom digit split, restated here (afmoe_digits).
tools/check_pretokenizers_with_llama_cpp.py compares the result with
llama.cpp's own split of every type. Run by hand:
    python3 tools/make_pretokenizer_golden.py
"""
import json
import pathlib
import re

import regex  # PyPI: \\p{..} classes and \\x{..}

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src/tokenizer/pretokenizer.cpp"
NAMES = ROOT / "src/tokenizer/pretokenizer_names.cpp"
VOCAB = ROOT.parent / "shared/models/vocab/ggml-vocab-qwen35.gguf.inp"
OUT = ROOT / "tests/tokenizer/data/pretokenizer_splits.json"

RAW = r'R"re\((.*?)\)re"'


def regex_lists(source):
    """Type name -> its regex strings, read from regexes_of() in pretokenizer.cpp."""
    constants = {m.group(1): m.group(2)
                 for m in re.finditer(r'constexpr std::string_view (k\w+) =\s*' + RAW + ';', source, re.S)}
    body = source[source.index("std::vector<std::string_view> regexes_of("):]
    body = body[:body.index("\n}\n")]
    lists = {}
    for m in re.finditer(r'((?:case T::\w+:\s*)+)(?://[^\n]*\n\s*)*return \{(.*?)\};', body, re.S):
        items = []
        for item in re.finditer(RAW + r'|\b(k\w+)\b', m.group(2), re.S):
            items.append(item.group(1) if item.group(1) is not None else constants[item.group(2)])
        for name in re.findall(r'case T::(\w+):', m.group(1)):
            lists[name] = items
    return lists


def canonical_names(source):
    """Type name -> the first tokenizer.ggml.pre name selecting it (pretokenizer_names.cpp)."""
    names = {}
    for name, type_name in re.findall(r'\{"([^"]+)", (?:\w+\()?\{?T::(\w+)', source):
        names.setdefault(type_name, name)
    return names


ASCII_WORD = "[A-Za-z0-9_]"
ASCII_BOUNDARY = f"(?:(?<={ASCII_WORD})(?!{ASCII_WORD})|(?<!{ASCII_WORD})(?={ASCII_WORD}))"


def python_pattern(pattern):
    # std::regex's \d and \b are ASCII (llama.cpp also collapses non-ASCII
    # text to marker bytes); Python's would take every Unicode digit and letter.
    pattern = re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: chr(int(m.group(1), 16)), pattern)
    return regex.compile(pattern.replace(r"\d", "[0-9]").replace(r"\b", ASCII_BOUNDARY))


AFMOE_DIGITS = r"\p{AFMoE_digits}"
NUMBER = regex.compile(r"\p{N}")


def afmoe_digits(word):
    """llama.cpp's unicode_regex_split_custom_afmoe: each run of \\p{N} in
    groups of 3 from the right; the first group ends the word holding the text
    before the run, and the text after the last run is a word of its own."""
    out, start, pos = [], 0, 0
    while pos < len(word):
        if not NUMBER.match(word[pos]):
            pos += 1
            continue
        end = pos
        while end < len(word) and NUMBER.match(word[end]):
            end += 1
        cut = pos + ((end - pos) % 3 or 3)
        while cut <= end:
            out.append(word[start:cut])
            start, cut = cut, cut + 3
        pos = end
    if start < len(word):
        out.append(word[start:])
    return out


def split(text, patterns):
    words = [text] if text else []
    for pattern in patterns:
        if pattern == AFMOE_DIGITS:
            words = [piece for word in words for piece in afmoe_digits(word)]
            continue
        compiled = python_pattern(pattern)
        out = []
        for word in words:
            start = 0
            for m in compiled.finditer(word):
                if m.start() > start:
                    out.append(word[start:m.start()])
                if m.end() > m.start():
                    out.append(m.group())
                start = m.end()
            if start < len(word):
                out.append(word[start:])
        words = out
    return words


TEXTS = [
    "1234567 12 1234 1,000,000.50",
    "HelloWorld camelCase ABCdef URLs x",
    "I'm YOU'LL they'RE we'Ve it's 'tis",
    "a\u0301\u0302 b\u0308 na\u00efve cafe\u0301 \u0915\u093f\u0924\u093e\u092c",
    "  \n\n  x\r\n\r\ny\t\tz  ",
    "\u4e2d\u6587\u5b57\u7b26 \u65e5\u672c\u8a9e\u3067\u3059 \ud55c\uad6d\uc5b4 \u0627\u0644\u0639\u0631\u0628\u064a\u0629",
    "<sentinel:12> IMGIMGABZ IMGIMGAAAAAZ",
    "x" + " " * 600 + "y",
    "...!!! ?? $+<=>^~| `code` (a|b) \u2026\u3002\uff0c",
    "\u0391\u03b8\u03ae\u03bd\u03b1 \u1f00\u03c1\u03c7\u03ae \u2126 \u212a \u0399\u03b5\u03c1\u03cc",
    "tab\there  new\nline\n\n\nend",
    "x  1234 abc12 ab  5678 a\u0661\u0662\u0663\u0664 99x 1234567890",
    "\u4e2d\u6587English\u6df7\u5408 Kimi\u7684\u6a21\u578b'S \u3400\U00020000\uf900 \u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \u1780\u17d2\u1798 \u1100\u1161 \uff76\uff85",
]


def main():
    lists = regex_lists(SOURCE.read_text(encoding="utf-8"))
    names = canonical_names(NAMES.read_text(encoding="utf-8"))
    texts = TEXTS + [t for t in VOCAB.read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n") if t]
    # \x1c-\x1f are whitespace to Python but not to Unicode's White_Space.
    texts = [t for t in texts if not any("\x1c" <= c <= "\x1f" for c in t)]
    types = [{"name": names[type_name], "regexes": patterns,
              "splits": [[text, split(text, patterns)] for text in texts]}
             for type_name, patterns in sorted(lists.items())]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as out:
        out.write('{"types": [\n')
        out.write(",\n".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in types))
        out.write("\n]}\n")
    print(f"{OUT}: {len(types)} types, {len(texts)} texts each")


if __name__ == "__main__":
    main()
