"""A content-addressed cache of deterministic model calls: ask once, replay the same answer.

Why: the behavioural instruments ask a local model thousands of questions whose answers
are a pure function of the weights, the runtime and the arguments — option log-probs
(`score_options`), greedy or seeded generations (`generate`), per-token log-probs of a
batch (`token_logprobs_of_ids`, the contamination check). Re-running a report re-asks all of
them. `lm-evaluation-harness --use_cache` and inspect_ai's model-call cache keep such
answers on disk; this is liedar's version.

What is cached, and what never is:

* ``score_options(prompt, options)`` and ``token_logprobs_of_ids(batch)``: always pure;
* ``generate(...)`` when it is deterministic — temperature 0, or a fixed ``seed`` — and has
  no ``on_token`` callback, no ``hook_layer`` and no ``stop_at_end=False`` (the inline monitor needs the live token
  stream and hidden states: those calls always go to the model);
* everything else (hidden states, token states, tokenization, attributes) is forwarded
  unchanged to the wrapped backend.

The key is the sha256 of canonical JSON of everything the answer depends on: backend kind,
model fingerprint (an organism's is a hash of base fingerprint + adapter, so base and
organism never share a key; the store file is per fingerprint too), adapter hash, dtype,
device, n_ctx, batch geometry, thread count (read at call time), the chat template, the
versions of liedar / numpy / the backend's library, a hash of the source files that compute
the answer (models/base.py, models/chat.py and the backend's module: editing the scoring
code invalidates the cache), the method name and its full arguments (a Dialogue by its
``to_dict``). A replayed answer is the exact object the model returned, bit for bit:
arrays are stored as their raw bytes (base64) with dtype and shape, never as rounded
decimals.

Store: one stdlib ``sqlite3`` file per model under the liedar cache root,
``calls/<fingerprint[:16]>.sqlite``, WAL mode, one row per call (key, JSON value, sha256 of
the value). Every read is verified: a row whose sha256 does not match its value, or that
does not decode, is deleted and the call recomputed (counted as ``corrupt``); a file that
is not a database at all is moved aside and rebuilt. No pickle anywhere. sqlite's locking
makes two processes writing the same store safe.

Weights that change under the wrapper would make replayed answers wrong, so reading the
torch model through the wrapper (``.model``, as weight noise and LoRA training do) turns
the wrapper into a plain pass-through for the rest of its life (counted as
``passed_through``); hand such code the bare backend (``CachedBackend.inner``) instead.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from liedar import __version__
from liedar.models.backend import Backend, Generation
from liedar.models.chat import Dialogue
from liedar.models.scoring import WEIGHT_ATTRS  # reading one ends caching (see module docstring)
from liedar.models.storage import cache_root, note

CALL_CACHE_FORMAT = 1  # bump when the key or the value encoding changes
CALLS_DIR = "calls"
LOCAL_KINDS = ("transformers", "llamacpp")
_OWN = frozenset({"_inner", "_store", "_identity", "_exposed", "stats"})
_LIBS = {"transformers": ("torch", "transformers"), "llamacpp": ("llama_cpp",)}


def store_path(backend: Backend, root: Optional[Path] = None) -> Path:
    """Where a backend's calls are stored: ``<cache root>/calls/<fingerprint[:16]>.sqlite``."""
    return Path(root or cache_root()) / CALLS_DIR / f"{str(backend.fingerprint)[:16]}.sqlite"


# ---- the store ----------------------------------------------------------------------------------------


class _Corrupt:
    """Sentinel: a row existed but failed verification (it has been deleted)."""


CORRUPT = _Corrupt()


class CallStore:
    """One sqlite file of (key, JSON value, sha256 of the value) rows, verified when read.

    A connection is opened per process (re-opened after a fork); each write is its own
    short transaction, so a crash loses at most the call in flight and another process
    sees every finished one.
    """

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = Path(path)
        self._conn: Optional[sqlite3.Connection] = None
        self._pid = -1

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = self._open()
        except sqlite3.DatabaseError as exc:  # not a database (damaged file): move it aside, start afresh
            aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                p = Path(str(self.path) + suffix)
                if p.exists():
                    p.replace(Path(str(aside) + suffix))
            note(f"model-call cache {self.path} was unreadable ({exc}); moved to {aside.name}, starting afresh")
            conn = self._open()
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL, sha256 TEXT NOT NULL)"
            )
            conn.execute("SELECT count(*) FROM calls WHERE key = ''").fetchone()  # a damaged file fails here
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def get(self, key: str) -> Any:
        """The decoded value, None when absent, `CORRUPT` when the row failed verification."""
        conn = self._connect()
        row = conn.execute("SELECT value, sha256 FROM calls WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value, digest = row
        try:
            if not isinstance(value, str) or _sha256(value) != digest:
                raise ValueError("sha256 mismatch")
            return decode(json.loads(value))
        except (ValueError, KeyError, TypeError):
            conn.execute("DELETE FROM calls WHERE key = ?", (key,))
            return CORRUPT

    def put(self, key: str, value: Any) -> None:
        text = json.dumps(encode(value), sort_keys=True, separators=(",", ":"))
        self._connect().execute(
            "INSERT OR REPLACE INTO calls (key, value, sha256) VALUES (?, ?, ?)", (key, text, _sha256(text))
        )

    def count(self) -> int:
        return int(self._connect().execute("SELECT count(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---- exact value encoding (JSON, no pickle) ----------------------------------------------------------


def encode(value: Any) -> Any:
    """JSON-safe, exact: arrays as raw bytes + dtype + shape; Generations field by field."""
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("object arrays are not cached")
        arr = np.ascontiguousarray(value)
        return {
            "t": "ndarray",
            "dtype": arr.dtype.str,
            "shape": list(arr.shape),
            "b64": base64.b64encode(arr.tobytes()).decode("ascii"),
        }
    if isinstance(value, Generation):
        return {
            "t": "Generation",
            "prompt_text": value.prompt_text,
            "text": value.text,
            "token_ids": [int(t) for t in value.token_ids],
            "n_prompt_tokens": int(value.n_prompt_tokens),
        }
    if isinstance(value, (list, tuple)):
        return {"t": "list", "items": [encode(v) for v in value]}
    raise TypeError(f"cannot cache a {type(value).__name__}")


def decode(d: Any) -> Any:
    kind = d["t"]
    if kind == "ndarray":
        arr = np.frombuffer(base64.b64decode(d["b64"], validate=True), dtype=np.dtype(d["dtype"]))
        return arr.reshape(tuple(int(x) for x in d["shape"])).copy()  # writable, like the model's own
    if kind == "Generation":
        return Generation(
            str(d["prompt_text"]), str(d["text"]), [int(t) for t in d["token_ids"]], int(d["n_prompt_tokens"])
        )
    if kind == "list":
        return [decode(v) for v in d["items"]]
    raise ValueError(f"unknown cached value type {kind!r}")


# ---- the key ---------------------------------------------------------------------------------------------


def _prompt_key(prompt: Any) -> Optional[dict]:
    if isinstance(prompt, Dialogue):
        return {"dialogue": prompt.to_dict()}
    if isinstance(prompt, str):
        return {"text": prompt}
    return None  # anything else goes to the model (which raises its own error)


def _source_hash(backend: Backend) -> str:
    """sha256 of the source files that compute the answers (edit them and the cache misses)."""
    from liedar.models import base, chat

    files = {Path(base.__file__), Path(chat.__file__)}
    try:
        own = inspect.getsourcefile(type(backend))
        if own:
            files.add(Path(own))
    except (TypeError, OSError):  # a class defined in __main__ or a string: no file of its own
        pass
    h = hashlib.sha256()
    for f in sorted(files):
        try:
            h.update(f.name.encode() + b"\0" + f.read_bytes())
        except OSError:
            h.update(f.name.encode() + b"\0missing")
    return h.hexdigest()


def backend_identity(backend: Backend) -> dict[str, Any]:
    """Everything about a loaded backend that its answers depend on (threads excepted: read per call)."""
    from liedar.models.cache import dtype_of

    kind = str(getattr(backend, "kind", type(backend).__name__))
    libs = {"numpy": np.__version__}
    for mod in _LIBS.get(kind, ()):
        m = sys.modules.get(mod)
        libs[mod] = str(getattr(m, "__version__", "?")) if m is not None else "not imported"
    template = "\0".join(
        str(getattr(backend, a, "") or "") for a in ("chat_template", "bos_token", "eos_token")
    ).encode()
    return {
        "format": CALL_CACHE_FORMAT,
        "liedar": __version__,
        "kind": kind,
        "fingerprint": str(backend.fingerprint),
        "base_fingerprint": getattr(backend, "base_fingerprint", None),
        "adapter_sha256": getattr(backend, "adapter_sha256", None),
        "dtype": dtype_of(backend),
        "device": str(getattr(backend, "device", "cpu")),
        "n_ctx": int(getattr(backend, "n_ctx", 0) or 0),
        "batch_size": getattr(backend, "batch_size", None),
        "n_seq_max": getattr(backend, "n_seq_max", None),
        "batch_tokens": getattr(backend, "batch_tokens", None),
        "template": hashlib.sha256(template).hexdigest(),
        "libs": libs,
        "code": _source_hash(backend),
        # only when on, so the keys of every default-path entry stay what they were
        **({"reuse_prefix": True} if getattr(backend, "reuse_prefix", False) else {}),
    }


def backend_threads(backend: Backend) -> Optional[int]:
    """The thread count the backend computes with now (it changes float summation order)."""
    n = getattr(backend, "n_threads", None)
    if n is None:
        n = getattr(getattr(backend, "llm", None), "n_threads", None)  # llama.cpp
    if n is None and getattr(backend, "kind", None) == "transformers" and "torch" in sys.modules:
        n = sys.modules["torch"].get_num_threads()  # a process-wide setting: read at call time
    return None if n is None else int(n)


def call_key(identity: dict[str, Any], threads: Optional[int], method: str, args: dict[str, Any]) -> str:
    payload = {"backend": identity, "n_threads": threads, "method": method, "args": args}
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


# ---- the wrapper ----------------------------------------------------------------------------------------


def new_stats() -> dict[str, int]:
    return {"hits": 0, "misses": 0, "corrupt": 0, "passed_through": 0}


class CachedBackend:
    """``backend`` with its deterministic calls answered from ``store`` when asked before.

    Every other attribute is the wrapped backend's own (read and written through). ``stats``
    counts ``hits`` (answers replayed), ``misses`` (asked the model, then stored),
    ``corrupt`` (stored rows that failed verification and were recomputed) and
    ``passed_through`` (calls that are never cached: live streams, unseeded sampling, or
    any call after the weights were handed out).
    """

    def __init__(self, backend: Backend, store: Union[CallStore, str, Path, None] = None) -> None:
        if isinstance(backend, CachedBackend):
            backend = backend.inner
        object.__setattr__(self, "_inner", backend)
        if store is None:
            store = store_path(backend)
        object.__setattr__(self, "_store", store if isinstance(store, CallStore) else CallStore(store))
        object.__setattr__(self, "_identity", None)
        object.__setattr__(self, "_exposed", False)
        object.__setattr__(self, "stats", new_stats())

    # ---- forwarding ------------------------------------------------------------------------------
    @property
    def inner(self) -> Any:
        """The bare backend (for code that changes or copies the weights)."""
        return self.__dict__["_inner"]

    @property
    def store(self) -> CallStore:
        return self.__dict__["_store"]

    @property
    def caching(self) -> bool:
        """False once the weights were handed out through this wrapper."""
        return not self.__dict__["_exposed"]

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("_inner")
        if inner is None:
            raise AttributeError(name)
        value = getattr(inner, name)
        if name in WEIGHT_ATTRS:
            object.__setattr__(self, "_exposed", True)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    def __repr__(self) -> str:
        return f"CachedBackend({self.inner!r}, store={str(self.store.path)!r})"

    # ---- the cached calls ------------------------------------------------------------------------
    def _through(self, method: str, args: dict[str, Any], compute: Callable[[], Any]) -> Any:
        if self.__dict__["_exposed"]:
            self.stats["passed_through"] += 1
            return compute()
        if self.__dict__["_identity"] is None:
            object.__setattr__(self, "_identity", backend_identity(self.inner))
        key = call_key(self.__dict__["_identity"], backend_threads(self.inner), method, args)
        try:
            got = self.store.get(key)
        except sqlite3.Error as exc:  # an unusable store (read-only disk, lock timeout) never stops a run
            self._give_up(exc)
            self.stats["passed_through"] += 1
            return compute()
        if got is CORRUPT:
            self.stats["corrupt"] += 1
            note(f"model-call cache {self.store.path}: a damaged {method} entry was deleted and is computed again")
            got = None
        if got is not None:
            self.stats["hits"] += 1
            return got
        value = compute()
        self.stats["misses"] += 1
        try:
            self.store.put(key, value)
        except sqlite3.Error as exc:
            self._give_up(exc)
        return value

    def _give_up(self, exc: Exception) -> None:
        """Stop caching (one note line): the answers are then the model's, uncached."""
        object.__setattr__(self, "_exposed", True)
        note(f"model-call cache {self.store.path} is unusable ({exc}); calls go to the model uncached")

    def score_options(self, prompt: Any, options: Sequence[str]) -> np.ndarray:
        pk = _prompt_key(prompt)
        if pk is None or isinstance(options, str) or not all(isinstance(o, str) for o in options):
            self.stats["passed_through"] += 1
            return self.inner.score_options(prompt, options)
        return self._through(
            "score_options", {"prompt": pk, "options": list(options)}, lambda: self.inner.score_options(prompt, options)
        )

    def generate(
        self,
        prompt: Any,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: Optional[int] = 0,
        on_token: Optional[Callable[..., None]] = None,
        hook_layer: Optional[int] = None,
        stop_at_end: bool = True,
        **kwargs: Any,
    ) -> Generation:
        def compute() -> Generation:
            return self.inner.generate(
                prompt,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                on_token=on_token,
                hook_layer=hook_layer,
                stop_at_end=stop_at_end,
                **kwargs,
            )

        pk = _prompt_key(prompt)
        deterministic = temperature == 0 or seed is not None
        passes = on_token is not None or hook_layer is not None or not stop_at_end or kwargs or pk is None
        if passes or not deterministic:
            self.stats["passed_through"] += 1
            return compute()
        args = {
            "prompt": pk,
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "seed": None if seed is None else int(seed),
        }
        return self._through("generate", args, compute)

    def token_logprobs_of_ids(self, batch: Sequence[Sequence[int]]) -> list[np.ndarray]:
        rows = [[int(t) for t in seq] for seq in batch]
        # the key keeps its first name so stores written before stay readable
        return self._through("_token_logprobs", {"batch": rows}, lambda: self.inner.token_logprobs_of_ids(rows))


def wrap(backend: Backend, store: Union[CallStore, str, Path, None] = None) -> Any:
    """``CachedBackend(backend)`` for a local backend (transformers, llama.cpp); any other
    backend (a served model, a test fake) is returned unchanged: its answers need not be
    a function of a fingerprint."""
    if isinstance(backend, CachedBackend) or getattr(backend, "kind", None) not in LOCAL_KINDS:
        return backend
    if not getattr(backend, "fingerprint", None):
        return backend
    return CachedBackend(backend, store)


def unwrap(backend: Backend) -> Any:
    return backend.inner if isinstance(backend, CachedBackend) else backend


__all__ = [
    "CALL_CACHE_FORMAT",
    "CachedBackend",
    "CallStore",
    "backend_identity",
    "call_key",
    "new_stats",
    "store_path",
    "unwrap",
    "wrap",
]
