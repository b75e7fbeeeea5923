#!/usr/bin/env python3
"""The Python binding's overhead: LLM.generate on the workload of
`skiff bench-throughput` (the same 64 random-token prompts and output lengths,
greedy, EOS ignored), output tok/s against bench-throughput's continuous mode.

  python python/benchmarks/python_overhead.py --skiff build/skiff -m MODEL [--num-prompts 64]
      [--input-len 128] [--output-len 128] [--seed 0] [--repeats 3]

Target: ratio >= 0.98. Run in a venv with the package installed (pip install .).
"""
import argparse
import json
import random
import subprocess
import tempfile
import time

from skiff import LLM, SamplingParams


def workload(args, vocab_size):
    """Prompts of random token ids, written as bench-throughput's --dataset."""
    rng = random.Random(args.seed)
    return [[rng.randrange(vocab_size) for _ in range(args.input_len)] for _ in range(args.num_prompts)]


def skiff_tok_s(args, prompts):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as dataset:
        for ids in prompts:
            dataset.write(json.dumps({"prompt_token_ids": ids, "output_len": args.output_len}) + "\n")
        dataset.flush()
        run = subprocess.run([args.skiff, "bench-throughput", "-m", args.model, "--dataset", dataset.name,
                              "--max-seqs", str(args.max_seqs), "--no-prefix-caching", "--continuous-only", "-o", "json"],
                             capture_output=True, text=True, check=True)
    (continuous,) = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    return continuous["output_tok_s"]


def python_tok_s(llm, prompts, args):
    params = SamplingParams(temperature=0, ignore_eos=True, max_tokens=args.output_len)
    llm.generate(prompts[:2], params, use_tqdm=False)  # untimed warm-up, as bench-throughput's
    start = time.perf_counter()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    return sum(len(o.outputs[0].token_ids) for o in outputs) / seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skiff", default="build/skiff")
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--num-prompts", type=int, default=64)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=128)
    ap.add_argument("--max-seqs", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="best of N for each side")
    args = ap.parse_args()
    # No prefix cache on either side: random prompts share nothing within a
    # run, but a repeat would find the previous run's prompts cached.
    llm = LLM(args.model, max_num_seqs=args.max_seqs, enable_prefix_caching=False)
    prompts = workload(args, llm.get_tokenizer().vocab_size)
    ours = max(python_tok_s(llm, prompts, args) for _ in range(args.repeats))
    theirs = max(skiff_tok_s(args, prompts) for _ in range(args.repeats))
    print(f"LLM.generate {ours:.1f} output tok/s, skiff bench-throughput {theirs:.1f}: ratio {ours / theirs:.3f}")


if __name__ == "__main__":
    main()
