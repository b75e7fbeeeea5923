"""Ray's own command line, as docs/ray.md shows it: `serve run skiff.ray:app
model=... num_replicas=... router=...` on Ray Serve's default port (8000),
with the skiff CLI the package's wheel installed (no binary argument, no
SKIFF_BINARY): its answer equals `skiff serve`'s, and Ctrl-C stops it all."""
import os
import signal
import socket
import subprocess
import sys
import time

import httpx

from conftest import QWEN, SERVE_ARGS, Server, need
import pytest

PORT = 8000  # Ray Serve's default: the command line sets no other


def port_taken(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_serve_run_command_line(tmp_path):
    need(QWEN)
    if port_taken(PORT):
        pytest.skip(f"port {PORT}, Ray Serve's default, is in use here")
    env = {k: v for k, v in os.environ.items() if k not in ("SKIFF_BINARY", "RAY_ADDRESS")}
    log = open(tmp_path / "serve_run.log", "w+")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ray.serve.scripts import cli; cli()", "run", "--address", "local",
         "skiff.ray:app", f"model={QWEN}", "num_replicas=1", "threads_per_replica=1", "router=prefix",
         "serve_args=" + " ".join(SERVE_ARGS)],
        env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{PORT}"
    try:
        deadline = time.time() + 300
        while True:
            assert proc.poll() is None, "serve run exited:\n" + open(log.name).read()[-4000:]
            try:
                if httpx.get(url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.time() < deadline, "serve run never became healthy:\n" + open(log.name).read()[-4000:]
            time.sleep(0.5)
        body = {"model": "qwen", "messages": [{"role": "user", "content": "Write a haiku about rivers."}],
                "max_tokens": 24, "temperature": 0}
        got = httpx.post(url + "/v1/chat/completions", json=body, timeout=120)
        assert got.status_code == 200, got.text
        assert "x-skiff-replica" in got.headers
        assert [m["id"] for m in httpx.get(url + "/v1/models", timeout=30).json()["data"]] == ["qwen"]
    finally:
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends: serve run shuts the app and its cluster down
        try:
            code = proc.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    assert code == 0, open(log.name).read()[-4000:]
    reference = Server(QWEN, *SERVE_ARGS)
    try:
        want = httpx.post(reference.url + "/v1/chat/completions", json=body, timeout=120).json()
    finally:
        assert reference.stop() == 0
    assert got.json()["choices"][0]["message"] == want["choices"][0]["message"]
    assert not port_taken(PORT), "serve run left its HTTP port open"
