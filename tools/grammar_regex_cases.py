#!/usr/bin/env python3
"""Writes tests/grammar/data/regex_cases.json: regexes with texts that match
and texts that do not, as Python's re.fullmatch(pattern, text, re.ASCII)
decides them, for tests/grammar/regex_table_test.cpp to hold skiff's
compile_regex to.

Each pattern has a few hand-written texts (matches and near misses), texts
generated from Python's own parse of the pattern (so they match, or nearly),
and mutations of all of those: characters deleted, inserted, replaced,
doubled, the text cut short or padded. Python labels every text; nothing here
decides a match itself. Also written: patterns skiff must refuse, as
{"pattern": ..., "refused": true}.

Python 3.11+ (re._parser), standard library only. Run from anywhere:

    python3 tools/grammar_regex_cases.py

The output is deterministic (seeded per pattern), so reruns give the same
file unless the lists below change.
"""
import json
import os
import random
import re
import warnings
import zlib

try:  # Python 3.11 moved sre_parse into re
    from re import _constants as C
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_constants as C
    import sre_parse

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "grammar", "data", "regex_cases.json")

TEXTS_PER_PATTERN = 40  # at most, after the hand-written ones
GENERATED_PER_PATTERN = 8

# Differences from Python that are deliberate, and so kept out of the table:
# - `$`: Python's matches before a final "\n" too. In a fullmatch that shows
#   only when something after the `$` consumes that newline (`a$\n`), and
#   skiff refuses an anchor anywhere but at the ends, so no pattern here
#   differs; `a$` against "a\n" is in the table (neither matches).
# - `(?<name>...)` is ECMA-262's spelling of a named group; Python 3.11 only
#   knows `(?P<name>...)`. Patterns with it are judged by Python respelled
#   (python_spelling below).
# - `\u{...}` is ECMA-262's (u flag) code point escape; Python refuses it.
#   Judged by Python as the equivalent \UXXXXXXXX.
# - Things Python accepts but skiff refuses by design (anchors not at the
#   ends of top-level alternatives, lookaround, \b, \B,
#   \A, \Z, backreferences, inline flags, comments, atomic groups, possessive
#   quantifiers, conditionals, octal escapes \1.. that read as
#   backreferences, \a which ECMA-262 reads as "a", repetitions over 10000)
#   are in REFUSED, not the table.

# (pattern, [hand-written texts]); whether each matches is Python's call.
PATTERNS = [
    # --- literals and escapes ---
    ("", ["", "a", " "]),
    ("a", ["a", "", "b", "aa", "A"]),
    ("abc", ["abc", "ab", "abcd", "abC", "xabc"]),
    ("hello world", ["hello world", "hello  world", "helloworld"]),
    (r"a\.b", ["a.b", "axb", "a\\.b"]),
    (r"\n", ["\n", "n", "\\n", "\r"]),
    (r"\t\r\f\v", ["\t\r\f\v", "\t\r\f", " \r\f\v"]),
    (r"a\tb", ["a\tb", "a b", "a\\tb"]),
    (r"\x41\x62\x7e", ["Ab~", "ab~", "AB~"]),
    (r"\x00a", ["\x00a", "a", "0a"]),
    (r"\0", ["\x00", "0", ""]),
    (r"\012", ["\n", "\x0012", "\x00"]),
    (r"\07", ["\x07", "\x007"]),
    (r"\08", ["\x008", "\x00", "\x08"]),
    (r"\u00e9t\u00e9", ["été", "ete", "e\u0301te\u0301"]),
    (r"\u65e5\u672c", ["日本", "日", "本日"]),
    (r"\U0001F600", ["😀", "😁", ""]),
    (r"\u{1F600}x", ["😀x", "😀", "x"]),
    (r"\u{e9}", ["é", "e"]),
    (r"\.\*\+\?\(\)\[\]\{\}\|\^\$\\\/", [".*+?()[]{}|^$\\/", ".*+?()[]{}|^$\\"]),
    (r"\-\ \#\&\~\"\'\,\:\;\<\>\=\!\@\%\`", ["- #&~\"',:;<>=!@%`", "- #&~\"',:;<>=!@%"]),
    (r"\é\日", ["é日", "e日"]),
    ("a]b}c", ["a]b}c", "abc"]),
    ("x-y", ["x-y", "x", "xy"]),
    # --- classes ---
    ("[abc]", ["a", "b", "c", "d", "", "ab"]),
    ("[a-z]", ["a", "m", "z", "A", "{", "`"]),
    ("[a-zA-Z0-9]+", ["abcXYZ019", "", "a-b", "a_b"]),
    ("[^abc]", ["d", "a", "\n", "é", "😀", ""]),
    ("[^a-z]+", ["ABC", "A b", "0\n1", "é"]),
    ("[]a]", ["]", "a", "[", "]a"]),
    ("[^]a]", ["b", "]", "a"]),
    ("[]]+", ["]]]", "]", "[]"]),
    ("[-a]", ["-", "a", "b"]),
    ("[a-]", ["-", "a", "b"]),
    ("[^-]", ["a", "-"]),
    ("[a-c-e]", ["a", "b", "-", "e", "d"]),
    ("[--/]", ["-", ".", "/", ","]),
    ("[!--]", ["!", "+", "-", "."]),
    (r"[a\-z]", ["a", "-", "z", "b"]),
    (r"[\]\[]", ["]", "[", "\\"]),
    (r"[\\]", ["\\", "]"]),
    ("[a^]", ["a", "^", "b"]),
    (r"[\^a]", ["a", "^"]),
    ("[$.|*+?(){}]+", ["$.|*+?(){}", "a"]),
    (r"[\d]", ["0", "9", "a", "٣"]),
    (r"[\d\s]+", ["1 2\t3\n", "1a"]),
    (r"[\w.-]+", ["a.b-c_d", "a b", "é"]),
    (r"[\w-]", ["-", "a", "_", "."]),
    (r"[^\d]", ["a", "5", "\n"]),
    (r"[^\W]", ["a", "_", "-", "é"]),
    (r"[\D\d]", ["a", "5", "\n", "😀"]),
    (r"[\s\S]*", ["anything\n at all", ""]),
    (r"[\x41-\x46]+", ["ABCDEF", "G", "abc"]),
    (r"[\n-\r]", ["\n", "\v", "\f", "\r", "\t", " "]),
    (r"[\t ]*", [" \t ", "\n"]),
    (r"[\b]", ["\b", "b", "\\"]),
    (r"[\0-\x1f]", ["\x00", "\x1f", " "]),
    (r"[\012]", ["\n", "1"]),
    (r"[\u00e0-\u00ff]+", ["àéîõü", "é", "a", "Ā"]),
    ("[à-ÿ]", ["à", "ÿ", "ß", "Ā"]),
    ("[éèê]", ["é", "è", "ê", "e", "ë"]),
    ("[^é]", ["e", "é", "è", "😀"]),
    ("[日本語]+", ["日本語", "日本", "中文"]),
    ("[😀-😂]", ["😀", "😁", "😂", "😃", "🙂"]),
    ("[^😀]", ["a", "😀", "😁"]),
    (r"[\U0001F600-\U0001F64F]+", ["😀🙏", "🚀"]),
    (r"[\x7f-\u0800]", ["\x7f", "\x80", "\u07ff", "\u0800", "\u0801", "~"]),
    (r"[\u07ff-\U00010000]", ["\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U00010001"]),
    (r"[\uffff-\U0010ffff]", ["\uffff", "\U00010000", "\U0010ffff", "\ufffe"]),
    (r"[^\x00-\x7f]", ["é", "a", "😀", "\x7f", "\x80"]),
    (r"[^\n]", ["a", "\n", "\r"]),
    # --- class escapes outside classes (ASCII, as ECMA-262) ---
    (r"\d+", ["0123456789", "12a", "١٢", ""]),
    (r"\D+", ["abc", "a1", "é"]),
    (r"\w+", ["abc_XYZ_019", "a-b", "é", "ß"]),
    (r"\W", ["-", " ", "é", "a", "_"]),
    (r"\s", [" ", "\t", "\n", "\r", "\f", "\v", "\x1c", "\x85", "\xa0", "\u2028", "a"]),
    (r"\S+", ["ab", "a b", "é"]),
    # --- dot ---
    (".", ["a", "\n", "\r", "é", "日", "😀", "", "ab"]),
    ("a.c", ["abc", "a.c", "a\nc", "aéc", "ac"]),
    (".*", ["", "anything", "two\nlines"]),
    ("..", ["ab", "é😀", "a", "abc"]),
    # --- groups ---
    ("(ab)", ["ab", "a", "abab"]),
    ("(ab)+", ["ab", "abab", "aba", ""]),
    ("(?:ab|cd)*e", ["e", "abcde", "abce", "abe"]),
    ("(?P<year>\\d{4})-(?P<month>\\d{2})", ["2024-01", "2024-1", "24-01"]),
    ("(?<word>[a-z]+) (?<num>\\d+)", ["abc 12", "abc12", "ABC 12"]),
    ("()", ["", "a"]),
    ("(?:)", ["", "a"]),
    ("(())a", ["a", ""]),
    ("((a)(b(c)))", ["abc", "ab"]),
    ("(a(b(c(d(e)))))", ["abcde", "abcd"]),
    # --- alternation ---
    ("a|b", ["a", "b", "ab", ""]),
    ("cat|dog|bird", ["cat", "dog", "bird", "cats", "catdog"]),
    ("a|", ["a", "", "b"]),
    ("|a", ["a", "", "aa"]),
    ("a||b", ["a", "", "b"]),
    ("x(a|)y", ["xay", "xy", "xaay"]),
    ("x(|a|b)y", ["xy", "xay", "xby", "xaby"]),
    ("(a|ab)(c|bcd)", ["ac", "abcd", "abc", "abbcd"]),
    ("ab|abc|abcd", ["ab", "abc", "abcd", "abcde"]),
    ("(a|b|c|d)+", ["abcd", "dcba", "abe"]),
    # --- quantifiers ---
    ("a*", ["", "a", "aaaa", "b"]),
    ("a+", ["a", "aaa", ""]),
    ("a?", ["", "a", "aa"]),
    ("ab*c", ["ac", "abc", "abbbc", "abd"]),
    ("a{3}", ["aaa", "aa", "aaaa"]),
    ("a{2,}", ["aa", "aaaaaa", "a"]),
    ("a{2,4}", ["aa", "aaa", "aaaa", "a", "aaaaa"]),
    ("a{,2}", ["", "a", "aa", "aaa"]),
    ("a{0}", ["", "a"]),
    ("a{0,0}b", ["b", "ab"]),
    ("a{1}", ["a", "aa"]),
    ("a{03}", ["aaa", "aa"]),
    ("a{,}", ["", "aaa", "a{,}"]),
    ("(ab){2,3}", ["abab", "ababab", "ab", "abababab"]),
    ("[0-9]{2}-[0-9]{2,3}", ["12-345", "12-3", "1-234"]),
    ("a*?", ["", "aaa"]),
    ("a+?b", ["ab", "aaab", "b"]),
    ("a??b", ["b", "ab", "aab"]),
    ("a{2,3}?", ["aa", "aaa", "aaaa"]),
    ("a{2,}?c", ["aac", "aaaac", "ac"]),
    ("a{,3}?", ["", "aaa", "aaaa"]),
    ("(a|b)*?c", ["c", "abbac", "ab"]),
    ("a{1000}", ["a" * 1000, "a" * 999, "a" * 1001]),
    ("[ab]{5,50}", ["ababa", "abab", "a" * 50, "b" * 51]),
    # --- a `{` that is a literal (Python's rules) ---
    ("a{", ["a{", "a"]),
    ("{", ["{", ""]),
    ("x{}", ["x{}", "x"]),
    ("a{x}", ["a{x}", "ax"]),
    ("a{1,2", ["a{1,2", "a"]),
    ("a{1,", ["a{1,", "a"]),
    ("a{ 1}", ["a{ 1}", "a"]),
    ("a{1, 2}", ["a{1, 2}", "aa"]),
    ("a{-1}", ["a{-1}"]),
    ("{a}", ["{a}", "a"]),
    ("a{2}{x", ["aa{x", "a{2}{x"]),
    ("}", ["}", ""]),
    ("a{1}}", ["a}", "a{1}}"]),
    (r"\{1\}", ["{1}", "1"]),
    ("[{}]+", ["{}}", "{1}"]),
    # --- anchors at the ends ---
    ("^abc$", ["abc", "ab", "abc\n"]),
    ("^a", ["a", "ba"]),
    ("a$", ["a", "a\n", "ab"]),
    ("^", ["", "a"]),
    ("$", ["", "\n"]),
    ("^$", ["", "\n"]),
    ("^a|b$", ["a", "b", "ab"]),
    ("^(a|b)+$", ["abba", "abc"]),
    ("(?:^a|^b)", ["a", "b", "ab"]),
    ("^(?:a|b)c$", ["ac", "bc", "c"]),
    ("^(?:x|y)$|z", ["x", "y", "z", "xz"]),
    # --- nested repetition ---
    ("(a*)*", ["", "aaa", "b"]),
    ("(a*)+b", ["b", "aab", "a"]),
    ("(a?)*b", ["b", "aaab"]),
    ("(a|b?)+c", ["c", "abbac", "abd"]),
    ("(a*b*)*c", ["c", "abbaac", "abb"]),
    ("((ab)*c)+", ["c", "ababcabc", "ab"]),
    ("(a{2}){2}", ["aaaa", "aaa", "aaaaa"]),
    ("(a{1,2}){2,3}", ["aa", "aaaaaa", "a", "aaaaaaa"]),
    ("((a|b){2})*", ["", "ab", "aba", "abba"]),
    ("(?:(?:a+)?b)*", ["", "abab", "aab", "a"]),
    ("(x+x+)+y", ["xxy", "xxxxxxxxxxxxxxxxy", "xxxxxxxxxxxxxxxx"]),
    # --- UTF-8 text ---
    ("café", ["café", "cafe", "café"]),
    ("naïve|résumé", ["naïve", "résumé", "naive"]),
    ("日本語", ["日本語", "日本", "日本語語"]),
    ("😀+", ["😀", "😀😀😀", "😁", ""]),
    ("🇫🇷", ["🇫🇷", "🇫", "🇩🇪"]),
    ("é?x", ["x", "éx", "ex"]),
    ("(é|ü)+", ["éüé", "e"]),
    ("[A-ZÀ-Ý][a-zà-ÿ]+( [A-ZÀ-Ý][a-zà-ÿ]+)*", ["José García", "Élodie", "josé", "José  García"]),
    (".{3}", ["日本語", "a😀b", "ab"]),
    ("[^a-z]{2}", ["日本", "é😀", "ab"]),
    (r"\w+@\w+", ["a@b", "é@b", "a@"]),
    ("ü{2,3}", ["üü", "üüü", "ü", "uu"]),
    # --- realistic patterns ---
    (r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}",
     ["john.doe@example.com", "a+b@x.io", "john@example", "@example.com", "john@ex ample.com", "j@e.c"]),
    (r"[^@\s]+@[^@\s]+\.[^@\s]+", ["a@b.c", "a@@b.c", "a b@c.d"]),
    (r"\d{4}-\d{2}-\d{2}", ["2024-02-29", "2024-2-29", "20240229", "2024-02-290"]),
    (r"(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
     ["1999-12-31", "2024-02-29", "2024-13-01", "2024-00-10", "2024-01-32", "1899-01-01"]),
    (r"\d{1,2}/\d{1,2}/\d{4}", ["1/2/2024", "12/31/1999", "123/1/2024"]),
    (r"\(?\d{3}\)?[-. ]?\d{3}[-. ]?\d{4}",
     ["(555) 123-4567", "555.123.4567", "5551234567", "555-1234", "(555) 123-45678"]),
    (r"\+?[1-9]\d{1,14}", ["+14155552671", "14155552671", "+0123", "+1"]),
    (r"\+\d{1,3}( \d{2,4}){2,4}", ["+33 1 23 45 67", "+33 12 34 56 78", "+1 555 1234"]),
    ("[A-Za-z_][A-Za-z0-9_]*", ["_private", "x1", "camelCase", "1abc", "a-b", ""]),
    (r"[a-z]+(?:_[a-z0-9]+)*", ["snake_case_2", "snake__case", "_x"]),
    (r"[A-Z][a-zA-Z0-9]*(?:\.[A-Z][a-zA-Z0-9]*)*", ["Foo.Bar", "Foo.bar", "Foo."]),
    (r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
     ["1.2.3", "0.0.0", "1.0.0-alpha.1", "1.0.0+build.5", "1.0.0-rc.1+exp.sha.5114f85", "01.2.3", "1.2", "1.2.3-", "1.2.3-01"]),
    (r"v?\d+\.\d+(\.\d+)?", ["v1.2", "1.2.3", "v1", "1..2"]),
    (r"([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?",
     ["23:59", "00:00:00Z", "12:30:45.123456+05:30", "24:00", "12:60", "12:30:45.1234567", "12:30+5:30"]),
    (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
     ["2024-01-15T10:30:00Z", "2024-01-15T10:30:00.5+01:00", "2024-01-15 10:30:00Z", "2024-01-15T10:30:00"]),
    (r"(1[0-2]|0?[1-9]):[0-5]\d ?([AaPp][Mm])", ["9:05 AM", "12:00pm", "13:00 PM", "9:5 AM"]),
    (r"P(\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?", ["P1Y2M3DT4H5M6S", "PT5M", "P", "1Y"]),
    ("#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})", ["#fff", "#A1B2C3", "#ffff", "#ggg", "fff", "#12345"]),
    (r"#[0-9a-f]{6}([0-9a-f]{2})?", ["#00ff00", "#00ff00aa", "#00ff00a"]),
    (r"rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)", ["rgb(255, 0, 10)", "rgb(1,2,3)", "rgb(1,2)"]),
    (r"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)",
     ["192.168.0.1", "255.255.255.255", "0.0.0.0", "256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5"]),
    (r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(/\d{1,2})?", ["10.0.0.0/8", "10.0.0.0/", "10.0.0"]),
    (r"([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}", ["00:1A:2b:3C:4d:5E", "00:1A:2b:3C:4d", "00-1A-2b-3C-4d-5E"]),
    (r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
     ["123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-62d3-a456-426614174000", "123e4567e89b12d3a456426614174000"]),
    (r"https?://[a-z0-9.-]+(:\d+)?(/[^\s]*)?", ["http://example.com", "https://a.b:8080/x?y=1", "ftp://a.b", "http://"]),
    (r"\d{5}(-\d{4})?", ["12345", "12345-6789", "1234", "12345-678"]),
    (r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}", ["SW1A 1AA", "M1 1AE", "SW1A1AA", "sw1a 1aa"]),
    (r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?", ["0", "-12.5e+3", "1E9", "01", "1.", ".5", "-"]),
    (r"\$\d{1,3}(,\d{3})*(\.\d{2})?", ["$1,234.56", "$12", "$1234", "$1,23"]),
    (r"[a-z0-9]+(?:-[a-z0-9]+)*", ["my-post-2", "my--post", "-post", "post-"]),
    (r"[A-Za-z0-9+/]*={0,2}", ["SGVsbG8=", "SGVsbG8===", "ab=c"]),
    (r'"([^"\\]|\\.)*"', ['"hi"', '"a\\"b"', '"unterminated', '"a"b"', '""']),
    (r"(yes|no|maybe)", ["yes", "no", "maybe", "Yes", "yesno"]),
    (r"(true|false|null)", ["true", "false", "null", "nul", "True"]),
    (r"[1-9]\d{0,2}(,\d{3})*", ["1,000,000", "1000", "999", "0"]),
    (r"\d{4} \d{4} \d{4} \d{4}", ["1234 5678 9012 3456", "1234567890123456"]),
    (r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", ["GB82WEST12345698765432", "GB82WEST123"]),
    (r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar) \d{4}", ["Mon, 01 Jan 2024", "Mon 01 Jan 2024"]),
    (r"\w+(\.\w+)*\.(jpg|png|gif)", ["photo.jpg", "a.b.png", "photo.jpeg", ".png"]),
    (r"(/[\w.-]+)+/?", ["/usr/local/bin", "/usr/", "usr/local", "//"]),
    (r"\s*\w+\s*=\s*\"[^\"]*\"\s*", [' key = "value" ', 'key="v"', "key=value"]),
    (r"[+-]?(\d+(\.\d*)?|\.\d+)", ["+1.", "-.5", "3.14", ".", "+"]),
]

# Patterns skiff must refuse (skiff::Error), each with why.
REFUSED = [
    # lookaround
    ("(?=a)a", "lookahead"),
    ("a(?!b)", "negative lookahead"),
    ("(?<=a)b", "lookbehind"),
    ("(?<!a)b", "negative lookbehind"),
    # backreferences (and octal escapes that read like them)
    (r"(a)\1", "backreference"),
    (r"(a)(b)\2", "backreference"),
    ("(?P<x>a)(?P=x)", "named backreference"),
    (r"(?<x>a)\k<x>", "ECMA named backreference"),
    (r"\101", "octal escape, read as a backreference by ECMA"),
    (r"[\1]", "octal escape in a class"),
    (r"\8", "bad group reference"),
    # assertions
    (r"a\bb", "word boundary"),
    (r"\Ba", "not a word boundary"),
    (r"\Aa", "start-of-text anchor"),
    (r"a\Z", "end-of-text anchor"),
    ("a^b", "anchor in the middle"),
    ("a$b", "anchor in the middle"),
    ("(^a)b", "anchor inside a group with something after"),
    ("a(b$)c", "anchor inside a group with something after"),
    ("(a$)*", "repeated anchor"),
    # Python matches "ac" here, but skiff takes ^ and $ only at the ends of
    # top-level alternatives (a group around the whole pattern is fine)
    ("(?:^a|^b)c", "anchors inside a group with something after"),
    ("^*a", "quantified anchor"),
    ("a$?", "quantified anchor"),
    # inline flags and other extensions
    ("(?i)abc", "inline flag"),
    ("(?i:a)b", "scoped inline flag"),
    ("a(?s).", "inline flag"),
    ("(?#comment)a", "comment group"),
    ("(?>a+)b", "atomic group"),
    ("(a)?(?(1)b|c)", "conditional"),
    ("(?x)", "verbose flag"),
    # possessive quantifiers
    ("a*+", "possessive"),
    ("a++b", "possessive"),
    ("a?+", "possessive"),
    ("a{2}+", "possessive"),
    ("a{1,3}+", "possessive"),
    # a quantifier on a quantifier or on nothing (Python: "multiple repeat", "nothing to repeat")
    ("a**", "multiple repeat"),
    ("a+*", "multiple repeat"),
    ("a{2}{3}", "multiple repeat"),
    ("a{2}*", "multiple repeat"),
    ("a*{2}", "multiple repeat"),
    ("a*?+", "multiple repeat"),
    ("a??*", "multiple repeat"),
    ("*a", "nothing to repeat"),
    ("+", "nothing to repeat"),
    ("a|?b", "nothing to repeat"),
    ("(*a)", "nothing to repeat"),
    ("{2}", "nothing to repeat"),
    ("a|{1,2}", "nothing to repeat"),
    ("({3})", "nothing to repeat"),
    # counts
    ("a{3,2}", "min over max"),
    ("a{10001}", "skiff's repetition limit (10000)"),
    ("a{1,99999999999}", "count too large"),
    # unbalanced
    ("(a", "missing )"),
    ("a)", "unbalanced )"),
    ("((a)", "missing )"),
    ("(a))", "unbalanced )"),
    (")", "unbalanced )"),
    ("(?:a", "missing )"),
    ("(", "missing )"),
    # classes
    ("[a", "unterminated class"),
    ("[", "unterminated class"),
    ("[]", "unterminated class"),
    ("[^]", "unterminated class"),
    ("[z-a]", "range out of order"),
    ("[a--]", "range out of order"),
    (r"[\d-z]", "class escape starting a range"),
    (r"[\w-a]", "class escape starting a range"),
    (r"[a-\d]", "class escape ending a range"),
    (r"[\s-\S]", "class escapes as range ends"),
    (r"[\u00ff-\u00e0]", "range out of order"),
    ("[😂-😀]", "range out of order"),
    # escapes
    ("a\\", "trailing backslash"),
    (r"\q", "unknown escape"),
    (r"\e", "unknown escape"),
    (r"\a", "bell in Python, 'a' in ECMA"),
    (r"\cJ", "ECMA control escape"),
    (r"\N{DIGIT ONE}", "named character escape"),
    (r"\p{L}", "Unicode property"),
    (r"\P{L}", "Unicode property"),
    (r"\x4", "truncated hex escape"),
    (r"\x4g", "bad hex escape"),
    (r"\u12", "truncated \\u escape"),
    (r"\u12G4", "bad \\u escape"),
    (r"\U0011ffff", "past U+10FFFF"),
    (r"\u{110000}", "past U+10FFFF"),
    (r"\u{}", "empty \\u{}"),
    (r"[\B]", "\\B in a class"),
    (r"[\A]", "\\A in a class"),
    # group names
    ("(?P<>a)", "missing group name"),
    ("(?P<1a>a)", "group name starting with a digit"),
    ("(?P<a-b>a)", "bad character in group name"),
    ("(?<a b>a)", "bad character in group name"),
    ("(?P<n>a)(?P<n>b)", "group name used twice"),
    ("(?P<n", "unterminated group name"),
    ("(?P", "incomplete group"),
    ("(?", "incomplete group"),
    ("(?Q)", "unknown extension"),
]

# Characters to insert or substitute in mutations, besides the pattern's own.
MUTATION_CHARS = list("a0Z_ -.\n") + ["é", "日", "😀", "\t", "{", "\\"]
# Candidates for generating a character of a class or `.`.
POOL = (
    [chr(c) for c in range(0x20, 0x7F)]
    + list("\t\n\r\f\v\x00\x1c\x7f\x80")
    + ["é", "ß", "ü", "Ω", "\u07ff", "\u0800", "日", "本", "\ud7ff", "\ue000", "\uffff", "😀", "🙏", "\U0010ffff"]
)
REPEAT_CODES = (C.MAX_REPEAT, C.MIN_REPEAT) + ((C.POSSESSIVE_REPEAT,) if hasattr(C, "POSSESSIVE_REPEAT") else ())


def python_spelling(pattern):
    """The pattern as Python 3.11 writes it: (?<name> as (?P<name>, \\u{X} as \\UXXXXXXXX."""
    p = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    return re.sub(r"\\u\{([0-9A-Fa-f]+)\}", lambda m: "\\U%08X" % int(m.group(1), 16), p)


def fullmatch(pattern, text):
    return re.fullmatch(python_spelling(pattern), text, re.ASCII) is not None


def in_category(cat, ch):
    o = ord(ch)
    digit = 0x30 <= o <= 0x39
    space = ch in " \t\n\r\f\v"
    word = o < 128 and (ch.isalnum() or ch == "_")
    return {
        C.CATEGORY_DIGIT: digit, C.CATEGORY_NOT_DIGIT: not digit,
        C.CATEGORY_SPACE: space, C.CATEGORY_NOT_SPACE: not space,
        C.CATEGORY_WORD: word, C.CATEGORY_NOT_WORD: not word,
    }[cat]


def in_set(items, ch):
    negate = False
    hit = False
    for op, av in items:
        if op == C.NEGATE:
            negate = True
        elif op == C.LITERAL:
            hit |= ord(ch) == av
        elif op == C.RANGE:
            hit |= av[0] <= ord(ch) <= av[1]
        elif op == C.CATEGORY:
            hit |= in_category(av, ch)
    return hit != negate


def set_candidates(items, rng):
    out = []
    for op, av in items:
        if op == C.LITERAL:
            out.append(chr(av))
        elif op == C.RANGE:
            out += [chr(av[0]), chr(av[1]), chr(rng.randint(av[0], av[1]))]
    return [c for c in out if not 0xD800 <= ord(c) <= 0xDFFF]


def pick(rng, candidates, accept):
    candidates = candidates + rng.sample(POOL, len(POOL))
    rng.shuffle(candidates)
    for c in candidates:
        if accept(c):
            return c
    return "?"


def generate(tree, rng, out):
    """Appends a random text Python's parse tree (nearly always) matches."""
    for op, av in tree:
        if op == C.LITERAL:
            out.append(chr(av))
        elif op == C.NOT_LITERAL:
            out.append(pick(rng, [], lambda c, av=av: ord(c) != av))
        elif op == C.ANY:
            out.append(pick(rng, [], lambda c: c != "\n"))
        elif op == C.IN:
            out.append(pick(rng, set_candidates(av, rng), lambda c, av=av: in_set(av, c)))
        elif op == C.BRANCH:
            generate(rng.choice(av[1]), rng, out)
        elif op == C.SUBPATTERN:
            generate(av[-1], rng, out)
        elif op in REPEAT_CODES:
            lo, hi, sub = av
            for _ in range(rng.randint(lo, min(hi, lo + 3))):
                generate(sub, rng, out)
        elif op == C.AT:
            pass
        else:
            raise ValueError(f"no generator for {op}")


def mutations(text, rng, own_chars):
    chars = MUTATION_CHARS + own_chars
    out = []
    if text:
        i = rng.randrange(len(text))
        out.append(text[:i] + text[i + 1:])                           # delete one
        out.append(text[:i] + rng.choice(chars) + text[i + 1:])       # replace one
        out.append(text[:i] + text[i] + text[i:])                     # double one
        out.append(text[:-1])                                         # cut the last
        out.append(text[1:])                                          # cut the first
        out.append(text[: rng.randrange(len(text))])                  # a prefix
    i = rng.randrange(len(text) + 1)
    out.append(text[:i] + rng.choice(chars) + text[i:])               # insert one
    out.append(text + rng.choice(chars))                              # pad the end
    out.append(rng.choice(chars) + text)                              # pad the start
    out.append(text + "\n")
    return out


def texts_for(pattern, hand):
    rng = random.Random(zlib.crc32(pattern.encode()))
    tree = sre_parse.parse(python_spelling(pattern), re.ASCII)
    generated = []
    for _ in range(GENERATED_PER_PATTERN):
        out = []
        generate(tree, rng, out)
        generated.append("".join(out))
    own_chars = sorted({c for c in pattern if c not in "\\()[]{}|*+?^$"})
    texts = list(dict.fromkeys(hand + generated))
    extra = []
    for t in texts:
        extra += mutations(t, rng, own_chars)
    extra = [t for t in dict.fromkeys(extra) if t not in texts]
    rng.shuffle(extra)
    texts += extra[: max(0, TEXTS_PER_PATTERN - len(texts))]
    return [[t, fullmatch(pattern, t)] for t in texts]


def python_refuses(pattern):
    try:
        re.compile(python_spelling(pattern), re.ASCII)
        return False
    except (re.error, OverflowError):
        return True


def main():
    warnings.simplefilter("ignore", FutureWarning)  # "possible set difference" in [--/] and the like
    cases = []
    seen = set()
    for pattern, hand in PATTERNS:
        assert pattern not in seen, f"listed twice: {pattern!r}"
        seen.add(pattern)
        texts = texts_for(pattern, hand)
        n_match = sum(m for _, m in texts)
        if n_match == 0 or n_match == len(texts):
            print(f"note: {pattern!r}: all {len(texts)} texts {'match' if n_match else 'fail'}")
        cases.append({"pattern": pattern, "texts": texts})
    python_accepts = []
    for pattern, why in REFUSED:
        assert pattern not in seen, f"listed twice: {pattern!r}"
        seen.add(pattern)
        if not python_refuses(pattern):
            python_accepts.append(f"{pattern!r} ({why})")
        cases.append({"pattern": pattern, "refused": True})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]\n")
    n_texts = sum(len(c.get("texts", [])) for c in cases)
    n_match = sum(m for c in cases for _, m in c.get("texts", []))
    print(f"{len(PATTERNS)} patterns, {n_texts} texts ({n_match} match), {len(REFUSED)} refused -> {os.path.relpath(OUT)}")
    print("refused by skiff though Python accepts them:", ", ".join(python_accepts))


if __name__ == "__main__":
    main()
