"""A served model behind an OpenAI-compatible HTTP API, as a black-box `Backend`.

Why a backend and not a separate tool: the black-box instruments only ever call
``score_options(prompt, options)`` and ``generate(...)``; if a served model answers those two
calls, every behavioural runner works on vLLM, llama.cpp's server, Ollama or a hosted API
unchanged. What a served model cannot give (hidden states, weights) is declared in
``capabilities`` and refused in one line.

Two request shapes (``api``):

* ``"chat"`` (default): ``/chat/completions`` with the messages; the *server* applies its
  chat template. A trailing assistant message (liedar's ``"Answer:"`` prefill) cannot be
  continued through this endpoint, so it is dropped and options are matched on their
  stripped text (``" A"`` and ``"A"`` both count for option ``" A"``).
* ``"completions"``: ``/completions`` with the prompt text rendered *here* by liedar's own
  renderer from a local chat template (``chat_template`` or ``template_from=<local model>``),
  so the server sees exactly the text the in-process backends see and options are matched
  on their exact token (this is the parity mode; see docs/served.md).

Option scoring (``scoring="auto"``): one request of ``max_tokens=1`` with
``logprobs``/``top_logprobs``; each option's log-prob is read from the answer token's top
list. An option absent from the list gets the list's smallest log-prob (an upper bound): the
argmax is still exact whenever at least one option is listed. When the server returns no
log-probs, or lists none of the options, the backend falls back to a greedy generation and
`parse_option`; a reply that names no option is a recorded *no answer* (scores all NaN),
never a silent pick. The mode of every call is in the journal. `score_with_top` returns the
top list with the scores, from which `liedar.models.sampling.choice_law` reads a served
model's exact choice law.

K samples of one prompt (`sample`): one request with ``n=K`` where the server honours ``n``
(asked once per backend: fewer than K choices back, or a refusal, means it does not), K
requests with seeds ``seed .. seed + K - 1`` where it does not.

Research-run plumbing: bounded concurrency (an asyncio semaphore), a request-rate limit, the
SDK's own retries with exponential backoff on 429/5xx/timeouts, an on-disk response cache
keyed by (endpoint, model, request body incl. sampling parameters and seed) written
atomically and verified (sha256) on read, a journal appended (and fsynced) as each response
arrives so an interrupted run resumes from where it stopped, and usage counters (calls,
tokens, cache hits, modes). The API key is read from an environment variable and is never
written to the cache, the journal, the results or a log line.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
import threading
import time
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from liedar.core.errors import IncompatibleError, InputError, ModelUnavailableError
from liedar.models.backend import Backend, Encoded, Generation, TokenStep
from liedar.models.chat import TextInput, render

SPEC_PREFIX = "openai:"
CAPABILITIES = frozenset({"generate", "score_options"})  # no "hidden_states", no "weights"
DEFAULT_TOP_LOGPROBS = 20  # OpenAI's maximum; vLLM caps at --max-logprobs (default 20)
NO_KEY = "sk-no-key-required"  # local servers accept any key; the SDK insists on one
MAX_TIMEOUT = 86_400.0  # seconds: a request that may take over a day is a typo, and 1e300 overflows the clock
MIN_RATE_LIMIT = 1 / 3600  # requests per second: one an hour; below, a study would outlast any run
MAX_CONCURRENCY = 1024  # requests in flight: more than any server queues at once
MAX_RETRIES = 100
APIS = ("chat", "completions")
SCORINGS = ("auto", "logprobs", "parse")


class ServedError(ModelUnavailableError):
    """A served model failed in a way a retry cannot fix (named in one line)."""


class ServerFailed(ServedError):
    """The server kept answering HTTP 5xx after the retries."""


class RequestRejected(InputError):
    """The server refused a request as invalid (HTTP 4xx other than 401, 404 and 429).

    Why its own class: `ServedBackend.sample` asks once whether the server takes ``n``, and
    a server that refuses ``n`` (llama.cpp's llama-server answers "Only one completion
    choice is allowed") is telling it no, not failing; other callers see an `InputError`.
    """


# --------------------------------------------------------------------------- answer parser
_ANSWER_RE = re.compile(r"answer\s*(?:is)?\s*[:\-]?\s*\**\(?([A-Za-z0-9]+)\)?", re.IGNORECASE)


def parse_option(reply: str, options: Sequence[str]) -> Optional[int]:
    """Which option a free-text reply chose (index), or None ("no answer").

    The documented rule: options are compared by their stripped text, case-sensitively for
    single characters (letters), case-insensitively otherwise.

    1. the reply *starts with* an option (longest option first), followed by a non-word
       character or the end: ``"B"``, ``"B. Paris"``, ``"(B)"``, ``"Yes, because"``;
    2. else the last ``answer [is][:] X`` in the reply names an option;
    3. else None. Nothing is guessed from the option text appearing mid-sentence.
    """
    keys = [o.strip() for o in options]
    text = reply.strip().lstrip("(*\"' ")
    for i in sorted(range(len(keys)), key=lambda j: -len(keys[j])):
        k = keys[i]
        if not k:
            continue
        head = text[: len(k)]
        same = head == k if len(k) == 1 else head.lower() == k.lower()
        if same and (len(text) == len(k) or not (text[len(k)].isalnum() or text[len(k)] == "_")):
            return i
    found = _ANSWER_RE.findall(reply)
    if found:
        last = found[-1]
        for i, k in enumerate(keys):
            if (last == k) if len(k) == 1 else (last.lower() == k.lower()):
                return i
    return None


# --------------------------------------------------------------------------- cache + journal
def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(endpoint: str, body: dict[str, Any]) -> str:
    """Content key of one request: endpoint URL + the full body (model, messages or prompt,
    sampling parameters, seed). Never includes the API key."""
    return hashlib.sha256(_canonical({"endpoint": endpoint, "body": body}).encode("utf-8")).hexdigest()


class ResponseCache:
    """One JSON file per response, ``<dir>/<key[:2]>/<key>.json``, written atomically.

    Each entry stores the sha256 of its response; a file that fails to parse or to verify is
    reported once, set aside as ``*.corrupt`` (not deleted) and refetched.
    """

    def __init__(self, root: "str | Path"):
        self.root = Path(root)
        self.corrupt = 0

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[dict[str, Any]]:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            response = entry["response"]
            ok = (
                entry.get("key") == key
                and entry.get("sha256") == hashlib.sha256(_canonical(response).encode("utf-8")).hexdigest()
            )
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            self.corrupt += 1
            os.replace(path, path.with_suffix(".corrupt"))
            return None
        return response

    def put(self, key: str, endpoint: str, body: dict[str, Any], response: dict[str, Any]) -> None:
        from liedar.core._util.atomic import write_json_atomic

        digest = hashlib.sha256(_canonical(response).encode("utf-8")).hexdigest()
        entry = {"key": key, "endpoint": endpoint, "request": body, "response": response, "sha256": digest}
        write_json_atomic(self._path(key), entry, indent=0)


class Journal:
    """Records appended one line at a time (flushed and fsynced) as responses arrive.

    Why a journal next to the cache: it is the run's own account of what was asked and how it
    was scored (mode, parsed answer, tokens), readable while the run is going, and a resumed
    run skips keys already present, so nothing is duplicated. A torn last line (a kill during
    the write) is ignored on reading and rewritten by the resumed run.
    """

    def __init__(self, path: "str | Path"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        for row in self.read(self.path):
            self._seen.add(row["id"])

    @staticmethod
    def read(path: "str | Path") -> list[dict[str, Any]]:
        p = Path(path)
        if not p.is_file():
            return []
        rows = []
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a torn final line from an interrupted write
            if isinstance(row, dict) and "id" in row:
                rows.append(row)
        return rows

    def append(self, row: dict[str, Any]) -> bool:
        """Append unless a record with this id is already there; True if written."""
        with self._lock:
            if row["id"] in self._seen:
                return False
            data = _canonical(row) + "\n"
            with open(self.path, "a+b") as fh:
                fh.seek(0, os.SEEK_END)
                if fh.tell() > 0:  # repair a torn last line before appending
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":
                        fh.write(b"\n")
                fh.write(data.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            self._seen.add(row["id"])
            return True


# --------------------------------------------------------------------------- rate limit
class RateLimiter:
    """At most ``rate`` request starts per second (evenly spaced), shared by all tasks."""

    def __init__(self, rate: Optional[float]):
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock: Optional[asyncio.Lock] = None

    async def wait(self) -> None:
        if not self.interval:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


# --------------------------------------------------------------------------- configuration
@dataclass
class ServedConfig:
    model: str
    base_url: str
    api_key_env: Optional[str] = None  # name of the environment variable holding the key
    concurrency: int = 4
    rate_limit: Optional[float] = None  # requests per second
    timeout: float = 60.0
    max_retries: int = 3
    cache_dir: Optional[str] = None
    api: str = "chat"
    scoring: str = "auto"
    top_logprobs: int = DEFAULT_TOP_LOGPROBS
    chat_template: Optional[str] = None  # completions mode: rendered here
    bos_token: str = ""
    eos_token: str = ""
    stop: tuple[str, ...] = field(default_factory=tuple)

    def _check_limits(self) -> None:
        """Sizes and times in the range a run can use: a huge ``--timeout`` overflows the clock and
        a tiny ``--rate-limit`` spaces requests beyond any run's end, so both are refused here,
        before any request, with the bound named."""
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise InputError(
                f"--concurrency must lie in 1..{MAX_CONCURRENCY} requests in flight, got {self.concurrency}"
            )
        if self.rate_limit is not None and not MIN_RATE_LIMIT <= self.rate_limit:
            raise InputError(
                f"--rate-limit {self.rate_limit:g} requests/s would space requests {1 / self.rate_limit:.3g} s apart; "
                f"give at least {MIN_RATE_LIMIT:.6f} (one request an hour)"
            )
        if not 0 < self.timeout <= MAX_TIMEOUT:
            raise InputError(
                f"--timeout must lie in (0, {MAX_TIMEOUT:g}] seconds (a day at most), got {self.timeout:g}"
            )
        if not 0 <= self.max_retries <= MAX_RETRIES:
            raise InputError(f"--max-retries must lie in 0..{MAX_RETRIES}, got {self.max_retries}")
        if self.cache_dir is not None:
            where = Path(self.cache_dir)
            while not where.exists() and where != where.parent:
                where = where.parent
            if where.exists() and not where.is_dir():
                raise InputError(
                    f"--served-cache {self.cache_dir}: {where} is a file, not a folder; give a folder "
                    "(it is made when missing)"
                )

    def check(self) -> None:
        if not self.model:
            raise InputError("a served model needs a name: use --model openai:MODEL")
        if not re.match(r"^https?://[^/\s]+", self.base_url or ""):
            raise InputError(f"--base-url {self.base_url!r} is not an http(s) URL: give e.g. http://127.0.0.1:8000/v1")
        if self.api not in APIS:
            raise InputError(f"unknown api {self.api!r}: use one of {', '.join(APIS)}")
        if self.scoring not in SCORINGS:
            raise InputError(f"unknown scoring {self.scoring!r}: use one of {', '.join(SCORINGS)}")
        self._check_limits()
        if not 1 <= self.top_logprobs <= 20:
            raise InputError(f"top_logprobs must lie in 1..20 (the OpenAI API's range), got {self.top_logprobs}")
        if self.api == "completions" and not self.chat_template:
            raise InputError(
                "api='completions' renders the prompt here and needs the model's chat template: "
                "pass template_from=<local model name or .gguf> (or chat_template=...)"
            )


def _api_key(env: Optional[str]) -> str:
    if not env:
        return os.environ.get("OPENAI_API_KEY") or NO_KEY
    value = os.environ.get(env)
    if not value:
        raise InputError(
            f"the API key variable ${env} is not set: export {env}=... (the key is never written anywhere)"
        )
    return value


def template_of(model: str) -> tuple[str, str, str]:
    """(chat template, BOS text, EOS text) of a local GGUF model, read from its vocabulary only."""
    from liedar.models.registry import resolve

    source = resolve(model)
    if source.format != "gguf":
        raise InputError(f"template_from needs a .gguf model; {source.path} is a Hugging Face folder")
    from llama_cpp import Llama

    llm = Llama(str(source.path), vocab_only=True, verbose=False)

    def piece(t: int) -> str:
        return llm.detokenize([t], special=True).decode("utf-8", "replace") if t >= 0 else ""

    template = llm.metadata.get("tokenizer.chat_template") or ""
    if not template:
        raise InputError(f"{model} has no chat template in its GGUF metadata; pass chat_template=... explicitly")
    return template, piece(llm.token_bos()), piece(llm.token_eos())


# --------------------------------------------------------------------------- answer check
class BrokenAnswer(IncompatibleError):
    """A server's answer that breaks the OpenAI API (a field of the wrong type, a log-prob above
    0, a token listed twice, more choices or top entries than were asked), named by its field."""


def _broken(where: str, field: str, what: str) -> BrokenAnswer:
    return BrokenAnswer(f"{where} broke the OpenAI API: its answer's {field} {what}; fix or replace the server")


def _logprob(value: Any, where: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value > 0:
        raise _broken(where, field, f"is {_short(repr(value), 40)}, not a finite log-probability <= 0")
    return float(value)


def _top_entries(entries: Any, cap: int, where: str, field: str) -> None:
    """A chat top list: objects with a text ``token`` (each once) and a ``logprob``, at most the
    ``cap`` asked and the chosen token."""
    if not isinstance(entries, list):
        raise _broken(where, field, f"is a {type(entries).__name__}, not a list")
    if len(entries) > cap + 1:
        raise _broken(where, field, f"holds {len(entries)} entries, more than the {cap} asked (and the chosen token)")
    seen: set[str] = set()
    for i, e in enumerate(entries):
        _token_entry(e, where, f"{field}[{i}]")
        if e["token"] in seen:
            raise _broken(where, f"{field}[{i}].token", f"{e['token']!r} is listed twice")
        seen.add(e["token"])


def _token_entry(e: Any, where: str, field: str) -> None:
    if not isinstance(e, dict):
        raise _broken(where, field, f"is a {type(e).__name__}, not an object")
    if not isinstance(e.get("token"), str):
        raise _broken(where, f"{field}.token", "is missing or not text")
    _logprob(e.get("logprob"), where, f"{field}.logprob")


def _check_logprobs(lp: Any, cap: int, where: str, field: str) -> None:
    """A choice's ``logprobs``: the chat shape (``content``) or the completions shape (``top_logprobs``)."""
    if lp is None:
        return
    if not isinstance(lp, dict):
        raise _broken(where, field, f"is a {type(lp).__name__}, not an object")
    content = lp.get("content")
    if content is not None:
        if not isinstance(content, list):
            raise _broken(where, f"{field}.content", f"is a {type(content).__name__}, not a list")
        for i, e in enumerate(content):
            _token_entry(e, where, f"{field}.content[{i}]")
            if e.get("top_logprobs") is not None:
                _top_entries(e["top_logprobs"], cap, where, f"{field}.content[{i}].top_logprobs")
    tops = lp.get("top_logprobs")
    if tops is None:
        return
    if not isinstance(tops, list):
        raise _broken(where, f"{field}.top_logprobs", f"is a {type(tops).__name__}, not a list")
    for i, top in enumerate(tops):
        at = f"{field}.top_logprobs[{i}]"
        if top is None:
            continue
        if not isinstance(top, dict):
            raise _broken(where, at, f"is a {type(top).__name__}, not a token->logprob object")
        if len(top) > cap + 1:
            raise _broken(where, at, f"holds {len(top)} entries, more than the {cap} asked (and the chosen token)")
        for token, value in top.items():
            _logprob(value, where, f"{at}[{_short(repr(token), 20)}]")


def _check_choice(c: Any, cap: int, where: str, field: str) -> int:
    if not isinstance(c, dict):
        raise _broken(where, field, f"is a {type(c).__name__}, not an object")
    index = c.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise _broken(where, f"{field}.index", f"is {_short(repr(index), 40)}, not a whole number >= 0")
    message = c.get("message")
    if message is not None and not (isinstance(message, dict) and isinstance(message.get("content") or "", str)):
        raise _broken(where, f"{field}.message", "is not an object with a text content")
    if not isinstance(c.get("text") or "", str):
        raise _broken(where, f"{field}.text", "is not text")
    _check_logprobs(c.get("logprobs"), cap, where, f"{field}.logprobs")
    return index


def check_answer(data: Any, body: dict[str, Any], where: str) -> dict[str, Any]:
    """The one check of a completion answer, before anything reads it (fresh or cached).

    Why one place: the instruments read choices, texts and top lists from these answers in
    several ways (the parsed reply, K samples, an option's log-prob, the exact choice law); a
    server that breaks the API must be named in one line here, not surface as a wrong type
    (or a division by zero) wherever the answer is read. What must hold: ``choices`` a
    non-empty list of at most the ``n`` asked objects, each with its own whole-number
    ``index``; texts are text; every log-prob a finite number <= 0; every top list at most
    the size asked (one more allowed, the chosen token some servers add) with each token
    once; ``usage`` counts whole numbers.

    Parameters
    ----------
    data : object
        The parsed JSON answer.
    body : dict
        The request it answers (``n``, ``top_logprobs`` or ``logprobs`` give the sizes asked).
    where : str
        The endpoint, named in the message.

    Returns
    -------
    dict
        ``data``, unchanged.

    Raises
    ------
    BrokenAnswer
        One line naming the field that breaks the API.
    """
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
        raise _broken(where, "choices", "is missing or empty; the server is not OpenAI-compatible")
    asked = int(body.get("n") or 1)
    if len(data["choices"]) > asked:
        raise _broken(where, "choices", f"holds {len(data['choices'])} choices, more than the n={asked} asked")
    top = body.get("top_logprobs", body.get("logprobs"))
    cap = int(top) if isinstance(top, int) and not isinstance(top, bool) else DEFAULT_TOP_LOGPROBS
    indices = [_check_choice(c, cap, where, f"choices[{i}]") for i, c in enumerate(data["choices"])]
    if len(set(indices)) != len(indices):
        raise _broken(where, "choices[].index", f"repeats an index ({indices})")
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise _broken(where, "usage", f"is a {type(usage).__name__}, not an object")
    for key in ("prompt_tokens", "completion_tokens"):
        v = (usage or {}).get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise _broken(where, f"usage.{key}", f"is {_short(repr(v), 40)}, not a whole number >= 0")
    return data


# --------------------------------------------------------------------------- the backend
@dataclass(frozen=True)
class ScoredOptions:
    """What one scoring request read (`ServedBackend.score_with_top`).

    Attributes
    ----------
    scores : numpy.ndarray
        What `ServedBackend.score_options` returns for the options.
    top : dict of str to float, optional
        The answer's first token's top list, {token text: log-prob}; None when the scores
        came from a parsed generation (the server gave no log-probs, or listed no option)
        or while `ServedBackend.prefetch` plans.
    exact : bool
        True when options were matched on their exact token (completions API, no prefill
        dropped); otherwise on their stripped text, the listed variants' probabilities summed.
    """

    scores: np.ndarray
    top: Optional[dict[str, float]]
    exact: bool


class ServedBackend:
    """An OpenAI-compatible endpoint as a black-box Backend (see the module docstring)."""

    kind = "served"
    capabilities = CAPABILITIES
    n_layers = 0
    d_model = 0
    n_ctx = 1 << 30  # the server enforces its own context; liedar does not truncate

    def __init__(self, config: ServedConfig, *, progress: bool = False):
        config.check()
        self.config = config
        self.name = f"openai:{config.model}"
        self.base_url = config.base_url.rstrip("/")
        self.fingerprint = hashlib.sha256(f"{self.base_url}|{config.model}".encode()).hexdigest()
        self._key = _api_key(config.api_key_env)  # checked now: a missing key is one line before any work
        from liedar.models.storage import cache_root

        root = Path(config.cache_dir) if config.cache_dir else cache_root() / "served"
        self.cache = ResponseCache(root / "responses")
        self.journal = Journal(root / "journal.jsonl")
        self.progress = progress
        self.usage: Counter = Counter()
        self._checked = False
        self._logprobs_ok: Optional[bool] = None if config.scoring != "parse" else False
        self._n_ok: Optional[bool] = None  # does the server return n choices for n=K? (asked once, by `sample`)
        self._recording: Optional[list[Any]] = None
        self._pending: dict[str, "Future[dict[str, Any]]"] = {}
        self._bar: Any = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="liedar-served", daemon=True)
        self._thread.start()
        self._client = None
        self._sem: Optional[asyncio.Semaphore] = None
        self._check_lock: Optional[asyncio.Lock] = None
        self._limiter = RateLimiter(config.rate_limit)

    # ---- what a served model cannot do --------------------------------------------------
    def require(self, capability: str, what: str) -> None:
        """One clear line when an instrument needs something a served model does not expose."""
        if capability not in self.capabilities:
            raise IncompatibleError(
                f"{what} needs {capability.replace('_', ' ')}, which a served model ({self.name}) does not expose; "
                "run it on a local model (--model smollm2-135m --backend transformers|llamacpp)"
            )

    def hidden_states(self, *args: Any, **kwargs: Any) -> np.ndarray:
        self.require("hidden_states", "reading hidden states (probes, the monitor, extraction)")
        raise AssertionError("unreachable")

    def token_states(self, *args: Any, **kwargs: Any) -> Any:
        self.require("hidden_states", "reading token states (the monitor's audit)")

    def token_states_of_ids(self, *args: Any, **kwargs: Any) -> Any:
        self.require("hidden_states", "reading token states (the monitor's audit)")

    def check_layers(self, layers: Sequence[int]) -> list[int]:
        self.require("hidden_states", "reading a layer")
        raise AssertionError("unreachable")

    def tokenize(self, text: str, templated: bool = False) -> tuple[list[int], list[tuple[int, int]]]:
        self.require("token_ids", "tokenizing text")
        raise AssertionError("unreachable")

    def encode(self, inp: TextInput, *, add_generation_prompt: bool = False) -> Encoded:
        self.require("token_ids", "tokenizing text")
        raise AssertionError("unreachable")

    def token_text(self, token: int) -> str:
        self.require("token_ids", "reading a token's text")
        raise AssertionError("unreachable")

    def token_logprobs_of_ids(self, batch: Sequence[Sequence[int]]) -> list[np.ndarray]:
        self.require("token_ids", "per-token log-probabilities of a text")
        raise AssertionError("unreachable")

    @property
    def chat_template(self) -> Optional[str]:
        return self.config.chat_template

    @property
    def bos_token(self) -> str:
        return self.config.bos_token

    @property
    def eos_token(self) -> str:
        return self.config.eos_token

    @property
    def model(self) -> None:
        """No torch module behind a served model; the weight-noise runner reads this and says so."""
        return None

    # ---- lifecycle --------------------------------------------------------------------
    def close(self) -> None:
        if self._loop.is_running():
            if self._client is not None:
                try:
                    asyncio.run_coroutine_threadsafe(self._client.close(), self._loop).result(timeout=5)
                except Exception:  # closing is best effort; the process may be exiting
                    pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def __enter__(self) -> "ServedBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def usage_summary(self) -> dict[str, Any]:
        """Usage for the results: calls made, cache hits, tokens, scoring modes (never the key)."""
        u = dict(self.usage)
        return {
            "endpoint": self.base_url,
            "model": self.config.model,
            "api": self.config.api,
            "calls": u.get("calls", 0),
            "cache_hits": u.get("cache_hits", 0),
            "prompt_tokens": u.get("prompt_tokens", 0),
            "completion_tokens": u.get("completion_tokens", 0),
            "modes": {k[5:]: v for k, v in u.items() if k.startswith("mode:")},
            "no_answer": u.get("no_answer", 0),
            "n_honoured": self._n_ok,
            "corrupt_cache_entries": self.cache.corrupt,
            "journal": str(self.journal.path),
        }

    # ---- HTTP ---------------------------------------------------------------------------
    async def _ensure_client(self) -> Any:
        if self._client is None:
            from liedar.core._util.extras import require

            require("openai", "served models")
            import openai

            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._key,
                timeout=self.config.timeout,
                max_retries=self.config.max_retries,
            )
            self._sem = asyncio.Semaphore(self.config.concurrency)
        return self._client

    async def _check_server(self) -> None:
        """GET /models once: no server, a server that is not OpenAI-compatible, and a model the
        server does not list are each one line before any study request is sent."""
        if self._checked:
            return
        if self._check_lock is None:
            self._check_lock = asyncio.Lock()
        async with self._check_lock:  # one check, however many tasks start at once
            if not self._checked:
                await self._check_models()

    async def _check_models(self) -> None:
        import httpx

        url = f"{self.base_url}/models"
        headers = {"Authorization": f"Bearer {self._key}"}
        try:
            async with httpx.AsyncClient(timeout=self.config.timeout) as http:
                r = await http.get(url, headers=headers)
        except httpx.TimeoutException:
            raise ServedError(
                f"{url} did not answer within {self.config.timeout:g}s: check the server or raise --timeout"
            ) from None
        except httpx.HTTPError as exc:
            raise ServedError(
                f"no server answers at {self.base_url} ({type(exc).__name__}); start it or fix --base-url"
            ) from None
        if r.status_code in (401, 403):
            raise InputError(
                f"{self.base_url} refused the API key (HTTP {r.status_code}); "
                f"set the right key in ${self.config.api_key_env or 'OPENAI_API_KEY'}"
            )
        try:
            data = r.json()
            ids = [str(m["id"]) for m in data["data"]]
        except (ValueError, KeyError, TypeError):
            raise IncompatibleError(
                f"{self.base_url} is not an OpenAI-compatible API (GET /models gave HTTP {r.status_code}, "
                "not a model list); point --base-url at the server's /v1 root"
            ) from None
        aliases = set(ids) | {Path(i).name for i in ids} | {Path(i).stem for i in ids}
        if self.config.model not in aliases:
            shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
            raise InputError(
                f"the server at {self.base_url} has no model {self.config.model!r} (it serves: {shown}); "
                "use --model openai:<one of those>"
            )
        self._checked = True

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import openai

        client = await self._ensure_client()
        await self._check_server()
        assert self._sem is not None
        async with self._sem:
            await self._limiter.wait()
            try:
                raw = await client.post(path, body=body, cast_to=httpx_response_type())
            except openai.APITimeoutError:
                raise ServedError(
                    f"{self.base_url}{path} did not answer within {self.config.timeout:g}s "
                    f"({self.config.max_retries} retries); raise --timeout or lower --concurrency"
                ) from None
            except openai.APIConnectionError:
                raise ServedError(
                    f"lost the connection to {self.base_url} ({self.config.max_retries} retries); "
                    "restart the server and re-run: finished requests are cached"
                ) from None
            except openai.AuthenticationError:
                raise InputError(
                    f"{self.base_url} refused the API key; set the right key in "
                    f"${self.config.api_key_env or 'OPENAI_API_KEY'}"
                ) from None
            except openai.NotFoundError:
                raise InputError(
                    f"{self.base_url}{path} answered 404 for model {self.config.model!r}: the server does not "
                    "offer this model or endpoint (try --api chat, or check the model name)"
                ) from None
            except openai.RateLimitError:
                raise ServedError(
                    f"{self.base_url} kept answering 429 (rate limited) after {self.config.max_retries} retries; "
                    "lower --rate-limit/--concurrency and re-run: finished requests are cached"
                ) from None
            except openai.InternalServerError as exc:
                raise ServerFailed(
                    f"{self.base_url}{path} answered HTTP {exc.status_code} after {self.config.max_retries} "
                    "retries; check the server's log and re-run: finished requests are cached"
                ) from None
            except openai.APIStatusError as exc:
                raise RequestRejected(
                    f"{self.base_url}{path} rejected the request (HTTP {exc.status_code}): {_short(exc.message)}"
                ) from None
        try:
            data = raw.json()
        except ValueError:
            raise IncompatibleError(
                f"{self.base_url}{path} answered with malformed JSON (HTTP {raw.status_code}); "
                "the server is not OpenAI-compatible or is failing"
            ) from None
        return check_answer(data, body, f"{self.base_url}{path}")

    async def _fetch(self, path: str, body: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        endpoint = self.base_url + path
        key = request_key(endpoint, body)
        cached = self.cache.get(key)
        if cached is not None:
            self.usage["cache_hits"] += 1
            return check_answer(cached, body, endpoint)
        data = await self._post(path, body)
        # the atomic write fsyncs: off the event loop, so other requests keep flowing
        await asyncio.get_running_loop().run_in_executor(None, self.cache.put, key, endpoint, body, data)
        self.usage["calls"] += 1
        u = data.get("usage") or {}
        self.usage["prompt_tokens"] += u.get("prompt_tokens") or 0
        self.usage["completion_tokens"] += u.get("completion_tokens") or 0
        return data

    def _request(self, path: str, body: dict[str, Any], meta: dict[str, Any]) -> Optional[dict[str, Any]]:
        if self._recording is not None:
            self._plan(path, body)
            return None
        pending = getattr(self, "_pending", {}).get(request_key(self.base_url + path, body))
        if pending is not None:
            return pending.result()
        future = asyncio.run_coroutine_threadsafe(self._fetch(path, body, meta), self._loop)
        return future.result()

    def _record(self, path: str, body: dict[str, Any], row: dict[str, Any]) -> None:
        row = {"id": request_key(self.base_url + path, body), **row}
        self.journal.append(row)

    # ---- bodies ---------------------------------------------------------------------------
    def _body(self, prompt: TextInput, *, max_tokens: int, temperature: float, seed: int, top: int) -> tuple:
        cfg = self.config
        body: dict[str, Any] = {
            "model": cfg.model,
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "seed": int(seed),
        }
        if cfg.stop:
            body["stop"] = list(cfg.stop)
        if cfg.api == "completions":
            assert cfg.chat_template is not None
            body["prompt"] = render(
                prompt, cfg.chat_template, bos_token=cfg.bos_token, eos_token=cfg.eos_token, add_generation_prompt=True
            ).text
            if top:
                body["logprobs"] = int(top)
            return "/completions", body, False
        dropped = False
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        else:
            rows = list(prompt.messages)
            if rows and rows[-1].role == "assistant":
                rows, dropped = rows[:-1], True
            messages = [{"role": m.role, "content": m.content} for m in rows]
        body["messages"] = messages
        if top:
            body["logprobs"] = True
            body["top_logprobs"] = int(top)
        return "/chat/completions", body, dropped

    # ---- the calls the runners make -----------------------------------------------------------
    def score_options(self, prompt: TextInput, options: Sequence[str]) -> np.ndarray:
        """Log-prob of each option as the answer's first token (see the module docstring);
        all NaN when the model gave no answer (recorded in the journal)."""
        return self.score_with_top(prompt, options).scores

    def score_with_top(self, prompt: TextInput, options: Sequence[str]) -> "ScoredOptions":
        """`score_options`, together with the top list the scores were read from.

        Why a second face of the same request: the exact choice law of a served model
        (`liedar.models.sampling.choice_law`) needs every listed token's log-prob, not only
        the options', to temper them; reading them from this one request keeps the law and
        the deterministic choice on the same response (and the same cache entry).

        Parameters
        ----------
        prompt : TextInput
            Plain text or a dialogue.
        options : sequence of str
            The options to score.

        Returns
        -------
        ScoredOptions
            The scores, the top list (None when the scores came from a parsed generation, or
            while `prefetch` plans) and whether options were matched on their exact token.
        """
        if isinstance(options, str) or len(options) == 0:
            raise InputError("options must be a non-empty list of strings")
        if any(not o.strip() for o in options):
            raise InputError("an option is blank; every option needs at least one visible character")
        n = len(options)
        if self._logprobs_ok is not False:
            path, body, dropped = self._body(
                prompt, max_tokens=1, temperature=0.0, seed=0, top=self.config.top_logprobs
            )
            data = self._request(path, body, {})
            if data is None:  # recording
                return ScoredOptions(np.zeros(n), None, False)
            top = _top_logprobs(data)
            if top is None:
                if self.config.scoring == "logprobs":
                    raise IncompatibleError(
                        f"{self.base_url} returned no log-probs although they were asked for; "
                        "use scoring='parse' (generation + answer parser) for this server"
                    )
                self._logprobs_ok = False
            else:
                self._logprobs_ok = True
                exact = self.config.api == "completions" and not dropped
                scores, listed = option_logprobs(top, options, exact=exact)
                if listed:
                    mode = "logprobs" + ("-prefill-dropped" if dropped else "")
                    self.usage["mode:" + mode] += 1
                    self._record(
                        path, body, {"call": "score_options", "mode": mode, "scores": scores.tolist(), "listed": listed}
                    )
                    return ScoredOptions(scores, top, exact)
        # fallback: greedy generation + the documented parser
        path, body, _ = self._body(prompt, max_tokens=8, temperature=0.0, seed=0, top=0)
        data = self._request(path, body, {})
        if data is None:
            return ScoredOptions(np.zeros(n), None, False)
        text = _text(data)
        pick = parse_option(text, options)
        scores = np.full(n, np.nan)
        mode = "parse"
        if pick is None:
            mode = "parse-no-answer"
            self.usage["no_answer"] += 1
        else:
            scores = np.full(n, -np.inf)
            scores[pick] = 0.0
        self.usage["mode:" + mode] += 1
        self._record(path, body, {"call": "score_options", "mode": mode, "reply": text, "choice": pick})
        return ScoredOptions(scores, None, False)

    def generate(
        self,
        prompt: TextInput,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        on_token: Optional[Callable[[TokenStep], None]] = None,
        hook_layer: Optional[int] = None,
        stop_at_end: bool = True,
    ) -> Generation:
        """One completion (``seed`` is sent; servers differ in whether they honour it). No
        token ids or hidden states come back: ``hook_layer`` is refused, ``on_token`` gets the
        whole reply as one step, and a run of exactly ``max_tokens`` steps is refused (the
        OpenAI API has no portable way to ignore the end token)."""
        if not stop_at_end:
            self.require("exact_steps", "generating exactly max_tokens steps")
        if hook_layer is not None:
            self.require("hidden_states", "streaming hidden states during generation (the monitor)")
        if temperature < 0:
            raise InputError(f"temperature must be >= 0, got {temperature}")
        path, body, _ = self._body(prompt, max_tokens=max_tokens, temperature=temperature, seed=seed, top=0)
        data = self._request(path, body, {})
        if data is None:
            return Generation("", "A", [], 0)
        text = _text(data)
        self.usage["mode:generate"] += 1
        self._record(path, body, {"call": "generate", "mode": "generate", "reply": text})
        if on_token is not None and text:
            on_token(TokenStep(0, -1, text))
        shown = body.get("prompt") or _canonical(body.get("messages"))
        return Generation(shown, text, [], (data.get("usage") or {}).get("prompt_tokens") or 0)

    @property
    def n_honoured(self) -> Optional[bool]:
        """Whether the server returned ``n`` choices for one request with ``n`` > 1 (None: not asked yet)."""
        return self._n_ok

    def sample(
        self, prompt: TextInput, *, samples: int, max_tokens: int = 64, temperature: float = 0.7, seed: int = 0
    ) -> list[Generation]:
        """``samples`` sampled replies to one prompt, in one request where the server allows it.

        Why: K replies to one menu are K requests, each reading the prompt again and each
        a round trip; the OpenAI API and vLLM return K choices for one request with
        ``n=K``. Other servers ignore ``n`` and return one choice (llama-cpp-python,
        Ollama) or refuse it (llama.cpp's llama-server); docs/revealed.md has the table.
        So the first call asks once, for real even while `prefetch` plans (the plan must
        know which requests to send): a response with fewer than K choices, or a refusal,
        means no, and from then on each prompt gets the K requests ``generate`` sends
        (seeds ``seed .. seed + K - 1``, so their cache entries are those of the per-sample
        loop). The probe's response is cached, so a replay decides the same way and gives
        the same replies. Which way was taken is `n_honoured`, ``usage_summary()`` and,
        per request, the journal.

        Parameters
        ----------
        prompt : TextInput
            Plain text or a dialogue.
        samples : int
            K >= 1.
        max_tokens, temperature, seed
            As in `generate`; with ``n`` the server draws the K replies from the one
            ``seed``, so they are not the per-sample loop's replies, but the same law's.

        Returns
        -------
        list of Generation
            K replies (in the server's choice order with ``n``, in seed order without).

        Raises
        ------
        InputError
            When ``samples`` < 1 or ``temperature`` < 0.
        """
        if samples < 1:
            raise InputError(f"samples must be >= 1, got {samples}")
        if temperature < 0:
            raise InputError(f"temperature must be >= 0, got {temperature}")
        if samples > 1:
            path, body, _ = self._body(prompt, max_tokens=max_tokens, temperature=temperature, seed=seed, top=0)
            body["n"] = int(samples)
            if self._n_ok is None:
                self._probe_n(path, body)
            if self._n_ok:
                data = self._request(path, body, {})
                if data is None:  # planning
                    return [Generation("", "A", [], 0) for _ in range(samples)]
                texts = _texts(data)
                if len(texts) == samples:
                    self.usage["mode:generate-n"] += 1
                    self._record(path, body, {"call": "sample", "mode": "generate-n", "n": samples, "replies": texts})
                    shown = body.get("prompt") or _canonical(body.get("messages"))
                    tokens = (data.get("usage") or {}).get("prompt_tokens") or 0
                    return [Generation(shown, t, [], tokens) for t in texts]
                self.usage["n_short"] += 1  # honoured before, short now: this prompt takes K requests
        return [
            self.generate(prompt, max_tokens=max_tokens, temperature=temperature, seed=seed + k) for k in range(samples)
        ]

    def _probe_n(self, path: str, body: dict[str, Any]) -> None:
        """Send one ``n`` request now (also while planning) and keep whether it was honoured."""
        future = asyncio.run_coroutine_threadsafe(self._fetch(path, body, {}), self._loop)
        try:
            data = future.result()
        except (RequestRejected, ServerFailed):
            self._n_ok = False
            return
        self._n_ok = len(_texts(data)) >= int(body["n"])

    # ---- concurrency for sequential runners ---------------------------------------------------
    def prefetch(self, run: Callable[["ServedBackend"], Any]) -> Any:
        """Run ``run(self)`` twice: first *planning* — every request it makes is sent at once
        in the background (bounded by ``concurrency`` and ``rate_limit``) and answered with a
        placeholder, since runners' requests depend only on their seeds, not on earlier
        answers — then for real, each call waiting for its own response. The runner's own
        analysis in the planning pass overlaps with the network. A request that does depend
        on an answer (the parse fallback) is made in the second pass. The first failure
        cancels what is still queued and is raised as its one line; finished responses stay
        cached. Returns the second pass's result."""
        import concurrent.futures as cf

        self._pending = {}
        bar = None
        if self.progress:
            from liedar.core._util.progress import progress

            bar = progress(desc=f"{self.name} requests", unit="call")
        self._recording = []
        self._bar = bar
        try:
            try:
                run(self)
            finally:
                self._recording = None
            futures = list(self._pending.values())
            done, pending = cf.wait(futures, return_when=cf.FIRST_EXCEPTION)
            failed = [f for f in done if not f.cancelled() and f.exception() is not None]
            if failed:
                for f in pending:
                    f.cancel()
                cf.wait(pending, timeout=self.config.timeout)
                # failed holds only futures whose exception() is not None (filtered above)
                raise failed[0].exception()  # type: ignore[misc]
            return run(self)
        finally:
            self._pending = {}
            self._bar = None
            if bar is not None:
                bar.close()

    def _plan(self, path: str, body: dict[str, Any]) -> None:
        key = request_key(self.base_url + path, body)
        if key in self._pending:
            return
        future = asyncio.run_coroutine_threadsafe(self._fetch(path, body, {}), self._loop)
        if self._bar is not None:
            self._bar.total = (self._bar.total or 0) + 1
            future.add_done_callback(lambda _: self._bar.update(1) if self._bar is not None else None)
        self._pending[key] = future


def httpx_response_type() -> Any:
    import httpx

    return httpx.Response


def _short(text: Any, n: int = 120) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= n else s[: n - 3] + "..."


def _choice_text(choice: dict[str, Any]) -> str:
    """A checked choice's text (`check_answer`): the message's content, or the completion's text."""
    if "message" in choice:
        return (choice.get("message") or {}).get("content") or ""
    return choice.get("text") or ""


def _text(data: dict[str, Any]) -> str:
    return _choice_text(data["choices"][0])


def _texts(data: dict[str, Any]) -> list[str]:
    """Every choice's text, in the order of the choices' ``index`` (checked whole and distinct)."""
    return [_choice_text(c) for c in sorted(data["choices"], key=lambda c: c["index"])]


def _top_logprobs(data: dict[str, Any]) -> Optional[dict[str, float]]:
    """The first generated token's top list as {token text: log-prob}, or None when absent.

    Chat shape: ``choices[0].logprobs.content[0].top_logprobs = [{token, logprob}, ...]``;
    completions shape: ``choices[0].logprobs.top_logprobs[0] = {token: logprob}``.
    """
    lp = data["choices"][0].get("logprobs")
    if lp is None:
        return None
    out: dict[str, float] = {}
    if lp.get("content"):
        first = lp["content"][0]
        entries = first.get("top_logprobs") or [first]
        out = {e["token"]: float(e["logprob"]) for e in entries}  # each token once (`check_answer`)
    elif lp.get("top_logprobs"):
        out = {k: float(v) for k, v in (lp["top_logprobs"][0] or {}).items()}
    return out or None


def option_logprobs(top: dict[str, float], options: Sequence[str], *, exact: bool) -> tuple[np.ndarray, list[bool]]:
    """Each option's log-prob from a top list; unlisted options get the list's floor (an upper
    bound). ``exact``: the token must equal the option; otherwise stripped texts are compared
    and the listed variants' probabilities summed.

    Why public: `liedar.models.sampling.choice_law` reads a served model's law from the same
    list the same way, so the law and `ServedBackend.score_options` match tokens alike.

    Parameters
    ----------
    top : dict of str to float
        The answer token's top list, {token text: log-prob}.
    options : sequence of str
        The options to read.
    exact : bool
        Match the token exactly (True) or on stripped text (False).

    Returns
    -------
    tuple of (numpy.ndarray, list of bool)
        Each option's log-prob and whether it was listed.
    """
    floor = min(top.values())
    scores, listed = [], []
    for o in options:
        if exact:
            vals = [v for t, v in top.items() if t == o]
        else:
            vals = [v for t, v in top.items() if t.strip() == o.strip()]
        listed.append(bool(vals))
        scores.append(float(np.logaddexp.reduce(vals)) if vals else floor)
    return np.asarray(scores, dtype=np.float64), (listed if any(listed) else [])


# --------------------------------------------------------------------------- construction
def is_served_spec(name: str) -> bool:
    return str(name).startswith(SPEC_PREFIX)


def load_served(
    spec: str,
    *,
    base_url: Optional[str] = None,
    template_from: Optional[str] = None,
    **kwargs: Any,
) -> ServedBackend:
    """``openai:MODEL`` + ``base_url`` (or ``$OPENAI_BASE_URL``) -> a `ServedBackend`."""
    if not is_served_spec(spec):
        raise InputError(f"{spec!r} is not a served-model spec: use openai:MODEL")
    model = spec[len(SPEC_PREFIX) :]
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if not url:
        raise InputError(f"{spec} needs a server: pass --base-url http://HOST:PORT/v1 (or set OPENAI_BASE_URL)")
    progress = bool(kwargs.pop("progress", False))
    kwargs = {k: v for k, v in kwargs.items() if v is not None and k in ServedConfig.__dataclass_fields__}
    if template_from:
        kwargs["chat_template"], kwargs["bos_token"], kwargs["eos_token"] = template_of(template_from)
    return ServedBackend(ServedConfig(model=model, base_url=url, **kwargs), progress=progress)


def run_with(backend: Backend, run: Callable[[Any], Any]) -> Any:
    """``run(backend)``, through `ServedBackend.prefetch` when the backend is served (so its
    requests go out concurrently); plain ``run(backend)`` for local backends."""
    if isinstance(backend, ServedBackend):
        return backend.prefetch(run)
    return run(backend)


__all__ = [
    "ServedBackend", "ServedConfig", "ServedError", "ScoredOptions", "parse_option", "load_served", "is_served_spec",
    "run_with",
]  # fmt: skip
