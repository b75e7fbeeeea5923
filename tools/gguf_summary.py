#!/usr/bin/env python3
"""Prints what an architecture port needs to know about a GGUF file, read with
the `gguf` package (independent of skiff's reader): general.architecture, every
<arch>.* key, the tokenizer.ggml.* facts, layer 0's tensors, the global tensors
and a count of tensors per type.

    python3 tools/gguf_summary.py FILE.gguf [...]
"""
import collections
import sys

import gguf


def value(field):
    """A field's value as Python: scalars, strings, or short arrays."""
    t = field.types[0] if field.types else None
    if t == gguf.GGUFValueType.ARRAY:
        n = len(field.data)
        if field.types[-1] == gguf.GGUFValueType.STRING:
            return f"[{n} strings]"
        if n > 16:
            return f"[{n} values]"
        return [field.parts[i].tolist()[0] for i in field.data]
    if t == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8", "replace")
    return field.parts[field.data[0]].tolist()[0]


def summarize(path):
    r = gguf.GGUFReader(path)
    f = r.fields
    arch = value(f["general.architecture"])
    print(f"== {path}\ngeneral.architecture = {arch}")
    for k in ("general.name", "general.file_type", "general.quantization_version"):
        if k in f:
            print(f"{k} = {value(f[k])}")
    for k in f:
        if k.startswith(arch + "."):
            print(f"{k} = {value(f[k])}")
    for k in f:
        if k.startswith("tokenizer.ggml."):
            v = value(f[k])
            print(f"{k} = {v}")
    print(f"tokenizer.chat_template present: {'tokenizer.chat_template' in f}")
    print("layer 0 tensors:")
    for t in r.tensors:
        if t.name.startswith("blk.0."):
            print(f"  {t.name} {t.tensor_type.name} {list(map(int, t.shape))}")
    print("global tensors:")
    for t in r.tensors:
        if not t.name.startswith("blk."):
            print(f"  {t.name} {t.tensor_type.name} {list(map(int, t.shape))}")
    counts = collections.Counter(t.tensor_type.name for t in r.tensors)
    print(f"tensors: {len(r.tensors)}, per type: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        summarize(p)
