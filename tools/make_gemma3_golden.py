#!/usr/bin/env python3
"""Makes tests/tokenizer/data/gemma3_sentencepiece_ids.json: Gemma 3's ids for
llama.cpp's vector strings (and a few with whitespace runs, HTML tags and
unusual characters), encoded by SentencePiece itself.

Gemma 3's tokenizer is a SentencePiece BPE model; it is rebuilt here from the
GGUF's vocabulary (pieces, scores, types; identity normalizer, no dummy
prefix, whitespace escaped to U+2581, byte fallback). GGUF stores the
user-defined pieces (whitespace runs) with spaces where the model had U+2581;
they are turned back. Needs PyPI gguf, protobuf and sentencepiece:
    python3 tools/make_gemma3_golden.py ~/.cache/skiff/models/gemma-3-270m-q4_k_m.gguf
"""
import json
import pathlib
import sys

import sentencepiece
from gguf import GGUFReader
from sentencepiece import sentencepiece_model_pb2 as pb

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT.parent / "shared/models/vocab/ggml-vocab-llama-spm.gguf.inp"
OUT = ROOT / "tests/tokenizer/data/gemma3_sentencepiece_ids.json"
EXTRA = ["Hello world  multiple   spaces, digits 12345 and émojis 😁", "\n\n\n\t\t  x", "  leading",
         "trailing  ", "<b>bold</b> <table>", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u200b zero\u200bwidth", "def f(x):\n    return x**2\n"]
USER_DEFINED = 4


def processor(gguf_path):
    fields = GGUFReader(gguf_path).fields
    model = pb.ModelProto()
    for text, score, kind in zip(fields["tokenizer.ggml.tokens"].contents(), fields["tokenizer.ggml.scores"].contents(),
                                 fields["tokenizer.ggml.token_type"].contents()):
        piece = model.pieces.add()
        piece.piece = text.replace(" ", "\u2581") if kind == USER_DEFINED else text
        piece.score = score
        piece.type = kind
    spec = model.trainer_spec
    spec.model_type = pb.TrainerSpec.BPE
    spec.vocab_size = len(model.pieces)
    spec.byte_fallback = True
    spec.unk_id = fields["tokenizer.ggml.unknown_token_id"].contents()
    spec.bos_id = fields["tokenizer.ggml.bos_token_id"].contents()
    spec.eos_id = fields["tokenizer.ggml.eos_token_id"].contents()
    spec.pad_id = fields["tokenizer.ggml.padding_token_id"].contents()
    model.normalizer_spec.name = "identity"
    model.normalizer_spec.add_dummy_prefix = False
    model.normalizer_spec.remove_extra_whitespaces = False
    model.normalizer_spec.escape_whitespaces = True
    return sentencepiece.SentencePieceProcessor(model_proto=model.SerializeToString())


def main():
    sp = processor(sys.argv[1])
    texts = VECTORS.read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n") + EXTRA
    cases = [[text, sp.encode(text)] for text in texts]
    OUT.write_text(json.dumps({"model": pathlib.Path(sys.argv[1]).name, "cases": cases}, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    print(f"{OUT}: {len(cases)} strings")


if __name__ == "__main__":
    main()
