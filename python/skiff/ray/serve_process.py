"""One `skiff serve` child process on a free local port, owned by a replica.

Each Ray Serve replica runs its engine as a `skiff serve` child and proxies
HTTP to it: every endpoint and behaviour is then exactly the server's
(completions, chat, streaming, tools, structured outputs, errors, limits),
with nothing re-implemented in Python, and the engine's threads run outside
the replica's GIL. The child must never outlive its replica, so it is started
with PR_SET_PDEATHSIG (Linux sends it SIGKILL when its parent thread dies;
set by util-linux's setpriv) from a thread that lives exactly as long as the
child: that thread forwards the child's stderr to the replica's log and then
reaps it.
"""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from typing import List, Optional

import httpx

_PR_SET_PDEATHSIG = 1
# The replica's own polling of its child, left out of the forwarded log.
_POLLING_LOG = re.compile(r'"GET /(metrics|health|kv/prefix_blocks)" ')


def find_binary(binary: Optional[str]) -> str:
    """The skiff binary: the argument, else $SKIFF_BINARY, else the one this
    package's wheel installed beside the interpreter (a Ray worker's PATH need
    not hold its venv's bin/), else `skiff` on PATH."""
    name = binary or os.environ.get("SKIFF_BINARY")
    if name:
        path = shutil.which(name)
    else:
        path = shutil.which("skiff", path=sysconfig.get_path("scripts")) or shutil.which("skiff")
    if path is None:
        raise FileNotFoundError(
            f"no skiff binary '{name or 'skiff'}': install this package with pip (its wheel carries it), "
            "or build it (scripts/build.sh skiff) and pass binary=PATH, set SKIFF_BINARY, or put skiff on PATH "
            "on every node")
    return path


def _api_key(args: List[str]) -> Optional[str]:
    """The --api-key among `skiff serve`'s arguments (its own requests need it too)."""
    for i, arg in enumerate(args):
        if arg == "--api-key" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--api-key="):
            return arg.split("=", 1)[1]
    return None


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        os._exit(127)
    # The parent may have died between fork and prctl.
    if os.getppid() == 1:
        os._exit(127)


class ServeProcess:
    """`skiff serve -m MODEL --port 0 -t THREADS ARGS...`, healthy once constructed."""

    def __init__(self, binary: str, model: str, threads: int, args: List[str],
                 start_timeout_s: float = 300.0):
        self.cmd = [binary, "serve", "-m", model, "--host", "127.0.0.1", "--port", "0",
                    "-t", str(threads), *args]
        self.api_key = _api_key(args)
        self.proc: Optional[subprocess.Popen] = None
        self.port: Optional[int] = None
        self._started = threading.Event()
        self._log_tail: List[str] = []
        threading.Thread(target=self._own, name="skiff-serve", daemon=True).start()
        if not self._started.wait(60) or self.port is None:
            self.stop()
            raise RuntimeError("skiff serve did not start: " + " ".join(self.cmd) + "\n" + self.log_tail())
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if not self.alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("skiff serve never became healthy:\n" + self.log_tail())
            time.sleep(0.2)

    def _own(self) -> None:
        # Started here, so that the child's parent thread is this one. util-linux's
        # setpriv sets PR_SET_PDEATHSIG and execs the server, so the fork runs no
        # Python: with a preexec_fn the forked copy of a Ray worker (gRPC's threads
        # and fork handlers in it) once aborted and took the engine with it, seen in
        # CI. Without setpriv, the preexec_fn.
        setpriv = shutil.which("setpriv")
        cmd = [setpriv, "--pdeathsig", "KILL", "--", *self.cmd] if setpriv else self.cmd
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True, errors="replace",
                                         preexec_fn=None if setpriv else _die_with_parent)
        finally:
            if self.proc is None:
                self._started.set()
        for line in self.proc.stderr:
            if _POLLING_LOG.search(line):
                continue
            sys.stderr.write(line)
            self._log_tail = (self._log_tail + [line])[-50:]
            if self.port is None:
                m = re.search(r"listening on http://[^:]+:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    self._started.set()
        self.proc.wait()
        self._started.set()

    def log_tail(self) -> str:
        return "".join(self._log_tail)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc is not None else None

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM (the server cancels what is in flight and exits), then SIGKILL."""
        if not self.alive():
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
