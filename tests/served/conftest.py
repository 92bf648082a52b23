"""Servers for the served-model tests, all bound to 127.0.0.1 and stopped by their fixture.

* `fake_server`: a tiny threaded HTTP server speaking just enough of the OpenAI API, whose
  behaviour a test switches (``ok``, ``malformed``, ``500``, ``slow``, ``html``, ``nologprobs``)
  to produce each fault on demand; it counts requests and the peak number in flight. Its
  ``n_mode`` says what it does with ``n``: ``honour`` (K choices, as the OpenAI API and vLLM),
  ``ignore`` (one, as llama-cpp-python and Ollama) or ``refuse`` (HTTP 400, as llama-server).
* `llama_server`: llama-cpp-python's own OpenAI-compatible server on the shipped smollm2
  GGUF (``n_threads`` 1, flash attention on like the in-process backend), on a free port.
* `n_proxy`: a pass-through in front of `llama_server` that honours ``n`` by sending the
  server K requests (seeds ``seed + k``), so a real model can be served to a client that
  asks with ``n``; it counts the requests it receives.
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
import urllib.error
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
        self.n_mode = "honour"
        self.top_letters = "ABCDE"  # the letters the top list holds
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()  # set at teardown: a slow handler stops waiting
        self.handler_errors: list[str] = []  # what a handler raised (a client gone, say)
        self.edit = None  # optional edit(body, answer): a test breaks the answer before it is sent


def _letters_logprobs(key: str, letters: str = "ABCDE") -> list[dict]:
    """Deterministic per-prompt log-probs over A..E (the argmax depends on the prompt); the
    list holds ``letters`` only and its probabilities sum to less than 1 (an unlisted rest)."""
    h = hashlib.sha256(key.encode()).digest()
    raw = [-(1 + h[i] / 64) for i in range(5)]
    return [{"token": t, "logprob": v, "bytes": None} for t, v in zip("ABCDE", raw) if t in letters]


def _sampled_letter(key: str, seed: int, index: int) -> str:
    """A reply to a sampling request: a letter that depends on the prompt, seed and choice."""
    return "ABC"[hashlib.sha256(f"{key}|{seed}|{index}".encode()).digest()[0] % 3]


class TestServer(ThreadingHTTPServer):
    """A threaded server whose handler threads end with it and never print.

    `server_close` joins every handler thread (``daemon_threads`` off), so no handler outlives
    its fixture; and a handler's error (a client that timed out and left, so the reply meets a
    closed socket) is recorded on ``errors`` instead of printed to ``sys.stderr``, where it
    would land in whichever later test happens to be capturing the stream.
    """

    daemon_threads = False
    block_on_close = True

    def __init__(self, address, handler, errors: list[str]) -> None:
        super().__init__(address, handler)
        self.errors = errors

    def handle_error(self, request, client_address) -> None:
        self.errors.append(repr(sys.exc_info()[1]))


def make_handler(state: FakeState):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        counted = False  # this request is in ``state.in_flight``

        def _leave_flight(self) -> None:
            """Stop counting this request as in flight. Called before the reply is written: a
            client that has its reply may send its next request at once, and a count dropped
            only after the write would see both requests in flight (a peak one too high)."""
            if self.counted:
                with state.lock:
                    state.in_flight -= 1
                self.counted = False

        def _send(self, code: int, payload, ctype: str = "application/json") -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self._leave_flight()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _answer(self, body: dict, answer: dict) -> None:
            """Send a completion, through the test's ``state.edit`` when it set one."""
            if state.edit is not None:
                state.edit(body, answer)
            self._send(200, answer)

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
                self.counted = True
                state.bodies.append(body)
                state.headers.append(dict(self.headers))
            try:
                if state.delay:
                    state.closing.wait(state.delay)
                if state.mode == "slow":
                    state.closing.wait(3.0)
                if state.mode == "500":
                    return self._send(500, {"error": {"message": "boom"}})
                if state.mode == "malformed":
                    return self._send(200, b'{"choices": [ {"message": ', "application/json")
                if body.get("model") not in state.models:
                    return self._send(404, {"error": {"message": "model not found", "code": "model_not_found"}})
                key = json.dumps(body.get("messages") or body.get("prompt"), sort_keys=True)
                n = int(body.get("n") or 1)
                if n > 1 and state.n_mode == "refuse":
                    return self._send(400, {"error": {"message": "Only one completion choice is allowed"}})
                if "n" in body:  # K replies to one prompt: each choice its own letter
                    count = n if state.n_mode == "honour" else 1
                    seed = int(body.get("seed") or 0)
                    choices = [
                        {"index": i, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": _sampled_letter(key, seed, i)}}
                        for i in range(count)
                    ]  # fmt: skip
                    usage = {"prompt_tokens": 10, "completion_tokens": count, "total_tokens": 10 + count}
                    return self._answer(
                        body, {"id": "x", "object": "chat.completion", "choices": choices, "usage": usage}
                    )
                choice: dict = {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": state.reply},
                }
                if body.get("logprobs") and state.mode != "nologprobs":
                    top = _letters_logprobs(key, state.top_letters)
                    best = max(top, key=lambda e: e["logprob"])
                    choice["logprobs"] = {"content": [{**best, "top_logprobs": top}]}
                    choice["message"]["content"] = best["token"]
                usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
                self._answer(body, {"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage})
            finally:
                self._leave_flight()

    return Handler


@pytest.fixture
def fake_server():
    """The fake API on a free 127.0.0.1 port; ``state.close()`` stops it (teardown does too)."""
    state = FakeState()
    server = TestServer(("127.0.0.1", 0), make_handler(state), state.handler_errors)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"

    def close() -> None:
        if not state.closing.is_set():
            state.closing.set()
            server.shutdown()
            server.server_close()  # joins the handler threads

    state.close = close
    try:
        yield state
    finally:
        close()


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


class NProxy:
    """Honours ``n`` in front of a server that ignores it: K upstream requests, seeds seed + k."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.requests = 0
        self.upstream_requests = 0
        self.lock = threading.Lock()
        self.handler_errors: list[str] = []

    def forward(self, path: str, body: "dict | None") -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.upstream + path, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                with self.lock:
                    self.upstream_requests += body is not None
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


def make_proxy_handler(proxy: NProxy):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _send(self, code: int, data: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._send(*proxy.forward(self.path.removeprefix("/v1"), None))

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            with proxy.lock:
                proxy.requests += 1
            n = int(body.pop("n", 1) or 1)
            path = self.path.removeprefix("/v1")
            if n == 1:
                return self._send(*proxy.forward(path, body))
            merged: "dict | None" = None
            for k in range(n):
                code, data = proxy.forward(path, {**body, "seed": int(body.get("seed") or 0) + k})
                if code != 200:
                    return self._send(code, data)
                one = json.loads(data)
                one["choices"][0]["index"] = k
                if merged is None:
                    merged = one
                else:
                    merged["choices"].append(one["choices"][0])
            self._send(200, json.dumps(merged).encode())

    return Handler


@pytest.fixture
def n_proxy(llama_server):
    proxy = NProxy(llama_server.base_url)
    server = TestServer(("127.0.0.1", 0), make_proxy_handler(proxy), proxy.handler_errors)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    proxy.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()


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
