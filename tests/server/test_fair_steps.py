"""No stream starves behind another client's long prompt (issue 42, row 7):
steps are sized to --step-target-ms (150) from measured step times, so a
running stream gets a token about that often while a prompt of several
seconds is prefilled, and /metrics answers meanwhile."""
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from stream_gap import measure  # noqa: E402  (scripts/stream_gap.py measures the same for docs/benchmarks.md)


def test_a_long_prompt_does_not_stall_a_running_stream(qwen):
    # 1,500 tokens: seconds of prefill on one thread (the fixture's -t 1), one
    # step of --max-batch-tokens 2048 without a time target.
    m = measure(qwen.url, 1500, max_tokens=400)
    print(m)
    assert m["gap"] < 1.0, m
    assert m["metrics_s"] < 0.5, m
