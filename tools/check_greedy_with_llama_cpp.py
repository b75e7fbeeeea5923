#!/usr/bin/env python3
"""Greedy text of skiff against llama.cpp on random-weight models of each family.

For each family, `skiff gen-model` writes a random-weight GGUF (F32 by default);
llama.cpp's llama-server and `skiff serve` each load it and complete six prompts
greedily through /v1/completions. Where the token ids part, skiff's top-2
log-probabilities at that token say whether it was a near-tie (the two
candidates within --tie of each other), which float rounding may break either
way. A family passes when at least 5 of 6 prompts agree or part at a near-tie.

  tools/check_greedy_with_llama_cpp.py --skiff build/skiff \
      --llama-server ~/.cache/skiff/llama.cpp/.../build-no-amx/bin/llama-server
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

PROMPTS = ["Once upon a time", "The little dog", "Lily wanted to", "One day, Tom and his mom",
           "The sun was", "She opened the box and"]

# Family -> gen-model flags beyond the shape every family shares.
FAMILIES = {
    "llama": [],
    "qwen3moe": ["--experts", "8", "--experts-used", "2", "--expert-ffn", "64"],
    "qwen2moe": ["--experts", "8", "--experts-used", "2", "--expert-ffn", "64", "--shared-expert-ffn", "128"],
    # llama.cpp sizes OLMoE's k_norm by the embedding, so only MHA (as OLMoE is) loads there.
    "olmoe": ["--experts", "8", "--experts-used", "2", "--expert-ffn", "64", "--kv-heads", "4"],
    "granitemoe": ["--experts", "8", "--experts-used", "2", "--expert-ffn", "64"],
    "mixtral": ["--experts", "8", "--experts-used", "2", "--expert-ffn", "64"],
    "gpt-oss": ["--experts", "8", "--experts-used", "2", "--expert-ffn", "64", "--head-dim", "64"],
}


def post(port, path, body, timeout=120):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, proc, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.3)
    raise RuntimeError(f"server on port {port} did not become ready")


def llama_cpp_tokens(port, prompt, n):
    """llama-server's native /completion: the generated ids. (Its logprobs
    leave out tokens that end inside a UTF-8 character, so they do not align.)"""
    reply = post(port, "/completion", {"prompt": prompt, "n_predict": n, "temperature": 0, "return_tokens": True})
    return reply["tokens"]


def skiff_tokens(port, prompt, n):
    """skiff's /v1/completions: the generated ids and each position's top-2 log-probabilities."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as r:
        model = json.load(r)["data"][0]["id"]
    reply = post(port, "/v1/completions", {"model": model, "prompt": prompt, "max_tokens": n, "temperature": 0,
                                           "logprobs": 2, "return_tokens_as_token_ids": True})
    lp = reply["choices"][0]["logprobs"]
    return [int(t.removeprefix("token_id:")) for t in lp["tokens"]], lp["top_logprobs"]


def gap(top):
    values = sorted(top.values(), reverse=True)
    return values[0] - values[1] if len(values) > 1 else float("inf")


def compare(args, family, path, ports):
    arch = "llama" if family == "mixtral" else family
    servers = []
    try:
        llama_env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(args.llama_server))
        log = open(path + ".llama-server.log", "w")
        servers.append(subprocess.Popen([args.llama_server, "-m", path, "--port", str(ports[0]), "-t", "2", "-c", "512",
                                         "--temp", "0"], env=llama_env, stdout=log, stderr=log))
        servers.append(subprocess.Popen([args.skiff, "serve", "-m", path, "--port", str(ports[1]), "-t", "2"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        try:
            wait_ready(ports[0], servers[0])
        except RuntimeError:
            print(open(path + ".llama-server.log").read()[-3000:])
            raise
        wait_ready(ports[1], servers[1])
        agreed = 0
        for prompt in PROMPTS:
            want = llama_cpp_tokens(ports[0], prompt, args.tokens)
            got, got_top = skiff_tokens(ports[1], prompt, args.tokens)
            first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), None)
            if first is None:
                agreed += 1
                print(f"  {family:10} {prompt!r}: {len(got)} tokens equal")
                continue
            tie = gap(got_top[first])
            near = tie < args.tie
            agreed += near
            print(f"  {family:10} {prompt!r}: part at token {first} (id {want[first]} vs {got[first]}), "
                  f"top-2 gap {tie:.4f}{' (near-tie)' if near else ''}")
        print(f"{family} ({arch}): {agreed} of {len(PROMPTS)} agree")
        return agreed >= 5
    finally:
        for s in servers:
            s.terminate()
            s.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--skiff", default="build/skiff")
    p.add_argument("--llama-server", required=True)
    p.add_argument("--vocab", default="../shared/models/derived/stories260K-f32.gguf")
    p.add_argument("--type", default="f32")
    p.add_argument("--tokens", type=int, default=24)
    p.add_argument("--tie", type=float, default=0.01, help="top-2 log-probability gap counted as a near-tie")
    p.add_argument("families", nargs="*", default=list(FAMILIES))
    args = p.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families:
            path = os.path.join(tmp, family + ".gguf")
            arch = "llama" if family == "mixtral" else family
            shape = {"--layers": "2", "--dim": "256", "--heads": "4", "--kv-heads": "2", "--ffn": "512"}
            own = FAMILIES[family]
            shape.update(zip(own[::2], own[1::2]))
            subprocess.run([args.skiff, "gen-model", "--arch", arch, "-o", path, "--type", args.type, "--vocab-from",
                            args.vocab, "--seed", "3", *[x for kv in shape.items() for x in kv]], check=True,
                           stderr=subprocess.DEVNULL)
            ok = compare(args, family, path, (free_port(), free_port())) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
