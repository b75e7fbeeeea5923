"""Starts the real `skiff serve` binary on a free port for the tests.

SKIFF_BINARY (set by ctest) is the binary; real models come from the cache
scripts/fetch-models.sh fills (missing: the tests that need one skip, unless
SKIFF_REQUIRE_REAL_MODELS is set, as in CI).
"""
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("SKIFF_BINARY", str(ROOT / "build" / "skiff"))
MODELS = Path(os.environ.get("SKIFF_MODELS_DIR", ROOT.parent / "shared" / "models"))
CACHE = Path(os.environ.get("SKIFF_MODELS_CACHE", Path.home() / ".cache" / "skiff" / "models"))
STORIES = MODELS / "derived" / "stories260K-f32.gguf"
QWEN = CACHE / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN15 = CACHE / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GEMMA = CACHE / "gemma-3-270m-q4_k_m.gguf"


class Server:
    """A running `skiff serve`; its stderr is collected for the tests to read."""

    def __init__(self, model, *args, api_key=None):
        # One compute thread: ctest runs these beside the gtests, and two OpenMP
        # threads on a shared core spun at every barrier (the suite took 2-4x longer).
        cmd = [BINARY, "serve", "-m", str(model), "--port", "0", "-t", "1", *args]
        if api_key:
            cmd += ["--api-key", api_key]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        self.log = []
        self.port = None
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"listening on http://[^:]+:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(60) or self.port is None:
            self.stop()
            raise RuntimeError("skiff serve did not start:\n" + "".join(self.log))
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_key = api_key
        deadline = time.time() + 120
        while httpx.get(self.url + "/health").status_code != 200:
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("skiff serve never became healthy:\n" + "".join(self.log))
            time.sleep(0.05)

    def client(self, **kw):
        return openai.OpenAI(base_url=self.url + "/v1", api_key=self.api_key or "none", max_retries=0, **kw)

    def post(self, path, body=None, **kw):
        headers = kw.pop("headers", {})
        if self.api_key:
            headers.setdefault("Authorization", f"Bearer {self.api_key}")
        return httpx.post(self.url + path, json=body, headers=headers, timeout=120, **kw)

    def metrics(self):
        text = httpx.get(self.url + "/metrics").text
        values = {}
        for line in text.splitlines():
            m = re.match(r'^([a-z_:]+)\{model_name="[^"]*"\} (\S+)$', line)
            if m:
                values[m.group(1)] = float(m.group(2))
        return values

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode



def proc_status(pid, field):
    """A number from /proc/PID/status (its unit dropped)."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def rss_kib(pid):
    """The process's resident memory (VmRSS), KiB."""
    return proc_status(pid, "VmRSS")


def threads(pid):
    return proc_status(pid, "Threads")


def read_until_closed(s):
    """What the server sent before it closed the connection (recv gives b"")."""
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data

def need(path):
    if not path.exists():
        if os.environ.get("SKIFF_REQUIRE_REAL_MODELS"):
            pytest.fail(f"{path} is missing: run scripts/fetch-models.sh")
        pytest.skip(f"{path} is missing: run scripts/fetch-models.sh")
    return path


@pytest.fixture(scope="session")
def qwen():
    # Tests compare a request's output alone, in a batch and from the prefix
    # cache: bit-identical on panels in any mode (AVX-512: every type of the
    # file; AVX2: Q4_K, Q6_K, Q5_0, Q8_0: all of it), on row kernels with
    # --batch-invariant only (a real model's near-ties flip).
    server = Server(need(QWEN), "-c", "2048", "--served-model-name", "qwen", "--batch-invariant")
    yield server
    assert server.stop() == 0, "".join(server.log)


@pytest.fixture(scope="session")
def qwen15():
    """Qwen2.5-Coder-1.5B-Instruct: the smallest of these that uses tools."""
    server = Server(need(QWEN15), "-c", "4096", "--served-model-name", "qwen15")
    yield server
    assert server.stop() == 0, "".join(server.log)


@pytest.fixture(scope="session")
def gemma():
    """Gemma 3 270M: another vocabulary (262,144 tokens); a base model (no chat template)."""
    server = Server(need(GEMMA), "-c", "1024", "--served-model-name", "gemma")
    yield server
    assert server.stop() == 0, "".join(server.log)


@pytest.fixture(scope="session")
def stories():
    """A tiny model behind an API key, a small body limit and a short queue."""
    server = Server(STORIES, "--served-model-name", "stories", "--max-body", "65536",
                    "--max-seqs", "2", "--max-queue", "2", api_key="sekret")
    yield server
    assert server.stop() == 0, "".join(server.log)


def leave_mid_stream(server, path, marker, body):
    """A client that leaves a stream once a line holds `marker`: its KV blocks are freed and one cancel counted."""
    def idle():
        m = server.metrics()
        return m["skiff:kv_cache_blocks_used"] == 0 and m["vllm:num_requests_running"] == 0

    cancelled = server.metrics()["skiff:requests_cancelled_total"]
    with httpx.stream("POST", server.url + path, json=body, timeout=60) as r:
        lines = r.iter_lines()
        while marker not in next(lines):
            pass
        assert server.metrics()["skiff:kv_cache_blocks_used"] > 0
    deadline = time.time() + 10
    while not idle() and time.time() < deadline:
        time.sleep(0.02)
    assert idle(), server.metrics()
    assert server.metrics()["skiff:requests_cancelled_total"] == cancelled + 1


@pytest.fixture(scope="module")
def stories_chat(tmp_path_factory):
    """stories260K with a chat template that prints each message, behind an API key, a 64 KiB body limit."""
    template = tmp_path_factory.mktemp("template") / "chat.jinja"
    template.write_text("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                        "{% if add_generation_prompt %}assistant:{% endif %}")
    server = Server(STORIES, "--served-model-name", "stories", "--chat-template", str(template),
                    "-c", "256", "--max-body", "65536", api_key="sekret")
    yield server
    assert server.stop() == 0, "".join(server.log)
