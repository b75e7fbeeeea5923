"""Ctrl-C (SIGINT) during generate raises KeyboardInterrupt, cancels the
call's requests (the KV pool empties) and leaves the LLM usable."""
import signal
import subprocess
import sys
import time

SCRIPT = r"""
import sys
from skiff import LLM, SamplingParams
llm = LLM(model=sys.argv[1], max_num_seqs=16)
print("ready", flush=True)
try:
    llm.generate(["Once upon a time"] * 512, SamplingParams(max_tokens=100000, ignore_eos=True), use_tqdm=False)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", llm.kv_cache_blocks_used(), flush=True)
(out,) = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=4, ignore_eos=True), use_tqdm=False)
print("after", len(out.outputs[0].token_ids), flush=True)
"""


def test_ctrl_c_cancels_generate(stories_path):
    child = subprocess.Popen([sys.executable, "-c", SCRIPT, stories_path], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # generating: 512 requests of the whole context take ~20 s
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        child.kill()
    assert out.split("\n")[:2] == ["interrupted 0", "after 4"]
    assert child.returncode == 0
