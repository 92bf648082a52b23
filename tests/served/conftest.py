"""Servers for the served-model tests, all bound to 127.0.0.1 and stopped by their fixture.

* `fake_server`: a tiny threaded HTTP server speaking just enough of the OpenAI API, whose
  behaviour a test switches (``ok``, ``malformed``, ``500``, ``slow``, ``html``, ``nologprobs``)
  to produce each fault on demand; it counts requests and the peak number in flight.
* `llama_server`: llama-cpp-python's own OpenAI-compatible server on the shipped smollm2
  GGUF (``n_threads`` 1, flash attention on like the in-process backend), on a free port.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FakeState:
    def __init__(self) -> None:
        self.mode = "ok"
        self.models = ["fake-model"]
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.delay = 0.0
        self.reply = "B"
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.lock = threading.Lock()


def _letters_logprobs(key: str) -> list[dict]:
    """Deterministic per-prompt log-probs over A..E (the argmax depends on the prompt)."""
    h = hashlib.sha256(key.encode()).digest()
    raw = [-(1 + h[i] / 64) for i in range(5)]
    return [{"token": t, "logprob": v, "bytes": None} for t, v in zip("ABCDE", raw)]


def make_handler(state: FakeState):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _send(self, code: int, payload, ctype: str = "application/json") -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if state.mode == "html":
                return self._send(200, b"<html>hello</html>", "text/html")
            if self.path.endswith("/models"):
                return self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in state.models]})
            self._send(404, {"error": {"message": "not found"}})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n) or b"{}")
            with state.lock:
                state.requests += 1
                state.in_flight += 1
                state.peak = max(state.peak, state.in_flight)
                state.bodies.append(body)
                state.headers.append(dict(self.headers))
            try:
                if state.delay:
                    time.sleep(state.delay)
                if state.mode == "slow":
                    time.sleep(3.0)
                if state.mode == "500":
                    return self._send(500, {"error": {"message": "boom"}})
                if state.mode == "malformed":
                    return self._send(200, b'{"choices": [ {"message": ', "application/json")
                if body.get("model") not in state.models:
                    return self._send(404, {"error": {"message": "model not found", "code": "model_not_found"}})
                key = json.dumps(body.get("messages") or body.get("prompt"), sort_keys=True)
                choice: dict = {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": state.reply},
                }
                if body.get("logprobs") and state.mode != "nologprobs":
                    top = _letters_logprobs(key)
                    best = max(top, key=lambda e: e["logprob"])
                    choice["logprobs"] = {"content": [{**best, "top_logprobs": top}]}
                    choice["message"]["content"] = best["token"]
                usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
                self._send(200, {"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage})
            finally:
                with state.lock:
                    state.in_flight -= 1

    return Handler


@pytest.fixture
def fake_server():
    state = FakeState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def smollm2_gguf() -> Path:
    try:
        from liedar.models.registry import resolve

        return resolve("smollm2-135m").path
    except Exception as exc:  # not installed: the integration tests skip
        pytest.skip(f"smollm2-135m not available ({exc})")


class LlamaServer:
    """llama-cpp-python's server as a subprocess; `start` / `kill` / `stop` for the fault tests."""

    def __init__(self, gguf: Path, log: Path):
        self.gguf, self.log = gguf, log
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: "subprocess.Popen | None" = None

    def start(self, timeout: float = 90.0) -> None:
        cmd = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf), "--model_alias", "smollm2-135m",
            "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", "1", "--n_threads_batch", "1",
            "--n_ctx", "2048", "--flash_attn", "true",
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not come up within {timeout}s; see {self.log}")

    def kill(self) -> None:
        """SIGKILL: the server dies mid-request, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] (the 'serve' extra) is not installed")
    server = LlamaServer(smollm2_gguf(), tmp_path_factory.mktemp("llama_server") / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def llama_server_factory(tmp_path):
    """Fresh servers a test may kill and restart (each stopped at teardown)."""
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] (the 'serve' extra) is not installed")
    made: list[LlamaServer] = []

    def make() -> LlamaServer:
        server = LlamaServer(smollm2_gguf(), tmp_path / f"server{len(made)}.log")
        made.append(server)
        return server

    try:
        yield make
    finally:
        for server in made:
            server.stop()
