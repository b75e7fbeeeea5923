#!/usr/bin/env python3
"""Writes tests/data/quant_golden.json: small deterministic blocks of each
format skiff reads, decoded by the numpy reference in the `gguf` PyPI package
(gguf/quants.py, independent of skiff), plus float rows encoded by that
package's bit-exact ports of ggml's reference quantizers.

Floats are stored as their uint32 bit patterns so the C++ test can compare
exactly, NaNs included.

It also writes src/kernels/quant/iq_grids.h: the lattice grids of ggml's i-quants
(IQ1_S / IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), format facts read from
the same package (gguf/quants.py keeps each grid as packed hex), packed as 2- or
3-bit indices into each grid's few distinct values.

    pip install gguf numpy && python3 tools/make_quant_golden.py
"""
import json
import pathlib

import numpy as np
from gguf import GGML_QUANT_SIZES
from gguf import GGMLQuantizationType as T
from gguf import quants

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "quant_golden.json"
GRIDS_OUT = ROOT / "src" / "kernels" / "quant" / "iq_grids.h"

# Half and bfloat16 patterns worth pinning: zeros, subnormals, the normal
# boundaries, the largest finite values, infinities and NaNs.
SPECIAL_16 = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF,
              0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF, 0x3555, 0x0080, 0x007F]


def fp16_bytes(values):
    return np.asarray(values, dtype=np.float16).view(np.uint8)


def random_scales(rng, n, scale):
    """fp16 scale fields: finite, both signs, varied magnitude."""
    return fp16_bytes(rng.normal(0, scale, n))


def q8_0_blocks(rng, n):
    d = random_scales(rng, n, 0.01).reshape(n, 2)
    qs = rng.integers(-128, 128, (n, 32), dtype=np.int8).view(np.uint8)
    return np.concatenate([d, qs], axis=1)


def q4_0_blocks(rng, n):
    d = random_scales(rng, n, 0.01).reshape(n, 2)
    qs = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    return np.concatenate([d, qs], axis=1)


def k_header(rng, n):
    """Q4_K / Q5_K d, dmin and 12 packed scale bytes."""
    d = random_scales(rng, n, 0.001).reshape(n, 2)
    dmin = random_scales(rng, n, 0.001).reshape(n, 2)
    scales = rng.integers(0, 256, (n, 12), dtype=np.uint8)
    scales[0, :] = 0xFF  # every 6-bit scale and min at 63
    return np.concatenate([d, dmin, scales], axis=1)


def q4_k_blocks(rng, n):
    header = k_header(rng, n)
    qs = rng.integers(0, 256, (n, 128), dtype=np.uint8)
    return np.concatenate([header, qs], axis=1)


def q5_k_blocks(rng, n):
    header = k_header(rng, n)
    qh = rng.integers(0, 256, (n, 32), dtype=np.uint8)
    qh[1, :] = 0xFF  # every fifth bit set
    qs = rng.integers(0, 256, (n, 128), dtype=np.uint8)
    return np.concatenate([header, qh, qs], axis=1)


def q6_k_blocks(rng, n):
    ql = rng.integers(0, 256, (n, 128), dtype=np.uint8)
    qh = rng.integers(0, 256, (n, 64), dtype=np.uint8)
    scales = rng.integers(-128, 128, (n, 16), dtype=np.int8).view(np.uint8)
    d = random_scales(rng, n, 0.001).reshape(n, 2)
    return np.concatenate([ql, qh, scales, d], axis=1)


def block32_blocks(rng, n, has_min, has_qh):
    """Q4_1 / Q5_0 / Q5_1 / IQ4_NL: d, [m], [qh], qs; block 0 all-ones quants."""
    parts = [random_scales(rng, n, 0.01).reshape(n, 2)]
    if has_min:
        parts.append(random_scales(rng, n, 0.1).reshape(n, 2))
    if has_qh:
        qh = rng.integers(0, 256, (n, 4), dtype=np.uint8)
        qh[0, :] = 0xFF
        parts.append(qh)
    qs = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    qs[0, :] = 0xFF
    parts.append(qs)
    return np.concatenate(parts, axis=1)


def q2_k_blocks(rng, n):
    scales = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    scales[0, :] = 0xFF
    qs = rng.integers(0, 256, (n, 64), dtype=np.uint8)
    d = random_scales(rng, n, 0.001).reshape(n, 2)
    dmin = random_scales(rng, n, 0.001).reshape(n, 2)
    return np.concatenate([scales, qs, d, dmin], axis=1)


def q3_k_blocks(rng, n):
    hmask = rng.integers(0, 256, (n, 32), dtype=np.uint8)
    hmask[1, :] = 0
    qs = rng.integers(0, 256, (n, 64), dtype=np.uint8)
    scales = rng.integers(0, 256, (n, 12), dtype=np.uint8)
    scales[0, :] = 0xFF  # every scale at 63 - 32
    scales[1, :] = 0     # every scale at -32
    d = random_scales(rng, n, 0.001).reshape(n, 2)
    return np.concatenate([hmask, qs, scales, d], axis=1)


def iq4_xs_blocks(rng, n):
    d = random_scales(rng, n, 0.001).reshape(n, 2)
    scales = rng.integers(0, 256, (n, 6), dtype=np.uint8)  # scales_h (2 bytes), scales_l (4)
    scales[0, :] = 0xFF
    scales[1, :] = 0
    qs = rng.integers(0, 256, (n, 128), dtype=np.uint8)
    return np.concatenate([d, scales, qs], axis=1)


def sixteen_bit_words(rng):
    return np.concatenate([np.array(SPECIAL_16, dtype=np.uint16),
                           rng.integers(0, 65536, 46, dtype=np.uint16)]).view(np.uint8)


def f32_bits(values):
    return np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).ravel().tolist()


def dequantize_cases(rng):
    raw = {
        T.F16: sixteen_bit_words(rng),
        T.BF16: sixteen_bit_words(rng),
        T.Q8_0: q8_0_blocks(rng, 6),
        T.Q4_0: q4_0_blocks(rng, 6),
        T.Q4_K: q4_k_blocks(rng, 3),
        T.Q6_K: q6_k_blocks(rng, 3),
        # Its own generator, added later: the cases above keep their bytes.
        T.Q5_K: q5_k_blocks(np.random.default_rng(20261130), 3),
    }
    more = np.random.default_rng(20261201)  # the types added after Q5_K
    raw.update({
        T.Q4_1: block32_blocks(more, 6, has_min=True, has_qh=False),
        T.Q5_0: block32_blocks(more, 6, has_min=False, has_qh=True),
        T.Q5_1: block32_blocks(more, 6, has_min=True, has_qh=True),
        T.IQ4_NL: block32_blocks(more, 6, has_min=False, has_qh=False),
        T.Q2_K: q2_k_blocks(more, 3),
        T.Q3_K: q3_k_blocks(more, 3),
        T.IQ4_XS: iq4_xs_blocks(more, 3),
    })
    read_only = np.random.default_rng(20261202)  # formats skiff only reads
    raw.update({
        T.TQ1_0: np.concatenate([read_only.integers(0, 256, (3, 52), dtype=np.uint8),
                                 random_scales(read_only, 3, 0.01).reshape(3, 2)], axis=1),
        T.TQ2_0: np.concatenate([read_only.integers(0, 256, (3, 64), dtype=np.uint8),
                                 random_scales(read_only, 3, 0.01).reshape(3, 2)], axis=1),
        # E8M0 exponents over the whole range, subnormal ones (0, 1) included.
        T.MXFP4: np.concatenate([np.array([[0], [1], [2], [127], [200], [254]], dtype=np.uint8),
                                 read_only.integers(0, 256, (6, 16), dtype=np.uint8)], axis=1),
    })
    # NVFP4: its 4 UE4M3 scales over their range (0 and 0x7F read as 0), random codes.
    nvfp4 = np.random.default_rng(20261204)
    raw[T.NVFP4] = np.concatenate([np.array([[0, 1, 7, 8], [0x37, 0x38, 0x7E, 0x7F], [0x40, 0x10, 0x21, 0x5A]],
                                            dtype=np.uint8),
                                   nvfp4.integers(0, 256, (3, 32), dtype=np.uint8)], axis=1)
    lattice = np.random.default_rng(20261203)  # the i-quants with grids: fp16 d first, random fields after
    for qtype in (T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ3_XXS, T.IQ3_S, T.IQ1_S):
        size = GGML_QUANT_SIZES[qtype][1]
        raw[qtype] = np.concatenate([random_scales(lattice, 3, 0.001).reshape(3, 2),
                                     lattice.integers(0, 256, (3, size - 2), dtype=np.uint8)], axis=1)
    iq1_m = lattice.integers(0, 256, (3, 56), dtype=np.uint8)
    d_bits = random_scales(lattice, 3, 0.001).view(np.uint16)
    scales = iq1_m[:, 48:].copy().view(np.uint16) & np.uint16(0x0FFF)  # the fp16 d lives in their top nibbles
    for k in range(4):
        scales[:, k] |= ((d_bits >> np.uint16(4 * k)) & np.uint16(0xF)) << np.uint16(12)
    iq1_m[:, 48:] = scales.view(np.uint8)
    raw[T.IQ1_M] = iq1_m
    cases = []
    for qtype, blocks in raw.items():
        data = np.ascontiguousarray(blocks, dtype=np.uint8).ravel()
        values = quants.dequantize(data, qtype).ravel()
        cases.append({"type": qtype.name, "bytes_hex": data.tobytes().hex(),
                      "f32_bits": f32_bits(values)})
    return cases


def quantize_inputs(rng):
    """Rows of 4 blocks of 32: random, all zero, one with exact .5 ties in
    Q8_0 units (amax 127 gives id 1), and one with large and subnormal values."""
    rows = rng.normal(0, 1, (4, 32)).astype(np.float32)
    rows[1] = 0
    rows[2] = np.arange(32, dtype=np.float32) - 15.5
    rows[2][0] = 127
    rows[3] = rng.normal(0, 1, 32) * np.float32(1e4)
    rows[3][:8] = np.float32(1e-40)
    return rows.ravel()


def mxfp4_inputs(rng):
    """quantize_inputs' rows, then MXFP4's edges: a block max just below a power
    of two (log2 rounds up to it) and one exactly on it, every midpoint between
    two E2M1 values and beyond the largest (ties take the smaller magnitude, past
    6 it clamps), at two scales; and rows of random magnitudes."""
    values = [quantize_inputs(rng)]
    ties = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6.5], dtype=np.float32)
    for scale, top in ((1.0, np.nextafter(np.float32(4), np.float32(0))), (2.0 ** -6, np.float32(4))):
        row = np.concatenate([ties, -ties, ties, -ties]).astype(np.float32) * np.float32(scale)
        row[7] = top * np.float32(scale)
        row[15] = -top * np.float32(scale)
        values.append(row)
    values.append((rng.normal(0, 1, (4, 32)) * np.exp2(rng.integers(-60, 60, (4, 1)))).astype(np.float32).ravel())
    return np.concatenate(values)


def quantize_cases(rng):
    values = quantize_inputs(rng)
    cases = []
    for qtype in (T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1):
        data = quants.quantize(values.reshape(-1, 32), qtype)
        cases.append({"type": qtype.name, "f32_bits": f32_bits(values),
                      "bytes_hex": np.ascontiguousarray(data).view(np.uint8).tobytes().hex()})
    values = mxfp4_inputs(rng)  # added later: drawn after the cases above
    data = quants.quantize(values.reshape(-1, 32), T.MXFP4)
    cases.append({"type": T.MXFP4.name, "f32_bits": f32_bits(values),
                  "bytes_hex": np.ascontiguousarray(data).view(np.uint8).tobytes().hex()})
    return cases


# (C++ name, gguf class): each grid row packs its elements' indices into the
# class's grid_map, element k at bits bits*k.
GRIDS = [
    ("kIq2XxsGrid", quants.IQ2_XXS),
    ("kIq2XsGrid", quants.IQ2_XS),
    ("kIq2SGrid", quants.IQ2_S),
    ("kIq3XxsGrid", quants.IQ3_XXS),
    ("kIq3SGrid", quants.IQ3_S),
    ("kIq1SGrid", quants.IQ1_S),
]


def packed_rows(cls):
    cls.init_grid()
    values = np.array(cls.grid_map, dtype=np.float32)
    grid = cls.grid.reshape(cls.grid_shape)
    bits = int(np.ceil(np.log2(len(values))))
    rows = []
    for row in grid:
        word = 0
        for k, v in enumerate(row):
            (index,) = np.nonzero(values == v)[0]
            word |= int(index) << (bits * k)
        rows.append(word)
    return bits, rows


def write_grids():
    lines = [
        "// Generated by tools/make_quant_golden.py from the gguf package's grids: do not edit.",
        "// Row r of a grid packs its elements' indices into the grid's values, element k",
        "// at bits kBits * k.",
        "#pragma once",
        "#include <cstdint>",
        "",
        "namespace skiff::iq_grids {",
        "",
    ]
    for name, cls in GRIDS:
        bits, rows = packed_rows(cls)
        n, width = cls.grid_shape
        values = ", ".join(str(int(v)) for v in cls.grid_map)
        lines.append(f"// {cls.__name__}: {n} rows of {width}, values {{{values}}}")
        lines.append(f"constexpr int {name}Bits = {bits};")
        lines.append(f"constexpr int8_t {name}Values[] = {{{values}}};")
        lines.append(f"constexpr uint16_t {name}[{n}] = {{")
        for i in range(0, n, 12):
            lines.append("    " + ", ".join(f"0x{w:04x}" for w in rows[i:i + 12]) + ",")
        lines.append("};")
        lines.append("")
    lines.append("}  // namespace skiff::iq_grids")
    GRIDS_OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {GRIDS_OUT}")


def main():
    rng = np.random.default_rng(20240601)
    golden = {
        "source": "gguf PyPI package, gguf/quants.py; regenerate with tools/make_quant_golden.py",
        "dequantize": dequantize_cases(rng),
        "quantize": quantize_cases(rng),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
    write_grids()


if __name__ == "__main__":
    main()
