"""Activation extraction on Ray: an actor pool over shards, writing the local path's cache.

Why Ray Data and not a scheduler of our own: users who outgrow one CPU process already run
Ray clusters (GPU nodes, autoscaling, retries); ``Dataset.map_batches`` with a callable class
gives an actor pool where each actor loads the model once and is restarted by Ray when its
process dies. liedar only decides *what* a unit of work is: one shard of the activation cache
(models.cache), cut at the same ``shard_size`` boundaries as the single-process path. Each
actor answers its shard through `cached_hidden_states`, so a shard already in the cache is
read (verified) instead of computed, and a computed one is written atomically under its
content-addressed name. Consequences, each pinned by tests/scale:

* a Ray run and a local run produce the same bytes (same model, dtype and threads), and each
  reuses every shard the other wrote;
* a worker killed mid-run is restarted and its shard retried; a shard is written whole or not
  at all, and its name is a function of its inputs, so a retry cannot duplicate it;
* an interrupted run resumes: the shards that landed are read back, the rest computed.

The arrays come back to the driver through Ray's object store (one row per shard), so the
cache folder need not be shared between nodes for the result to be right; it must be shared
(an NFS or similar mount at the same path) for shards written on one node to be reused on
another. Ray is an optional extra, imported only inside these functions.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from liedar.core._util.netns import ISOLATE_HINT, loopback_only
from liedar.core.errors import InputError, LiedarError
from liedar.models.backend import Position
from liedar.models.cache import SHARD_SIZE, cached_hidden_states, dtype_of
from liedar.models.chat import Dialogue, TextInput
from liedar.models.storage import cache_root


def _require_ray():
    from liedar.core._util.extras import require

    return require("ray", "Ray extraction (--ray)")


# ---- the cluster ---------------------------------------------------------------------------


def check_address(address: Optional[str], timeout: float = 3.0) -> None:
    """A ``host:port`` (or ``ray://host:port``) that does not answer is refused in one line
    within ``timeout`` seconds, instead of Ray's long connection retries."""
    if address in (None, "", "local", "auto"):
        return
    target = address.split("://", 1)[-1]
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise InputError(f"--ray {address!r}: give host:port of a Ray head, auto, or nothing (local)")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise InputError(
            f"--ray {address}: no Ray head answers there ({exc.strerror or exc}); start one with "
            "'ray start --head' or omit the address for a local cluster"
        ) from None


@contextlib.contextmanager
def ray_session(address: Optional[str] = None, *, num_cpus: Optional[int] = None) -> Iterator[Any]:
    """Connect to the cluster at ``address`` (``auto``: the one ``ray start`` left running) or,
    with no address, start a local one with ``num_cpus`` CPUs and no dashboard, advertising
    127.0.0.1 as its node address; a cluster started here is shut down on exit, one that was
    already initialised is left alone.

    Ray 2.60's gRPC servers listen on every interface whatever node address is given, and
    liedar starts servers on loopback only: a *local* cluster is therefore started only in a
    network namespace whose sole interface is loopback (`liedar.core._util.netns.loopback_only`;
    scripts/isolated.sh makes one), and refused elsewhere with one line naming the fix. A
    cluster you run yourself (``address``) is yours to firewall (docs/scale.md)."""
    ray = _require_ray()
    if ray.is_initialized():
        yield ray
        return
    if address in (None, "", "local") and not loopback_only():
        raise InputError(
            "a local Ray cluster would listen on every network interface (Ray 2.60 binds them all); " + ISOLATE_HINT
        )
    check_address(address)
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
    try:
        if address in (None, "", "local"):
            ray.init(num_cpus=num_cpus or os.cpu_count(), _node_ip_address="127.0.0.1", **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError) as exc:
        raise InputError(
            f"--ray {address}: cannot connect to a Ray cluster ({str(exc).splitlines()[0][:160]}); "
            "start one with 'ray start --head' or omit the address for a local cluster"
        ) from None
    try:
        _quiet_data()
        yield ray
    finally:
        ray.shutdown()


def _quiet_data() -> None:
    """liedar shows its own progress; Ray Data's bars and per-operator logs would interleave."""
    from ray.data import DataContext

    ctx = DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    ctx.enable_operator_progress_bars = False


def check_resources(ray, *, concurrency: int, num_cpus: float, num_gpus: float) -> None:
    """Refuse a request the cluster can never place (it would wait forever), in one line."""
    have = ray.cluster_resources()
    if num_gpus and have.get("GPU", 0) < num_gpus:
        raise InputError(
            f"--num-gpus {num_gpus:g}: the Ray cluster has {have.get('GPU', 0):g} GPU(s); "
            "drop --num-gpus or connect to a cluster with GPU workers (--ray ADDRESS)"
        )
    if have.get("CPU", 0) < num_cpus:
        raise InputError(
            f"--num-cpus {num_cpus:g} per actor: the Ray cluster has {have.get('CPU', 0):g} CPU(s); ask for fewer"
        )
    if concurrency < 1:
        raise InputError(f"--concurrency {concurrency}: give at least 1 actor")


def check_writable(root: Path) -> None:
    """The cache folder must take a file from here (workers check again on their node)."""
    folder = Path(root) / "activations"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-", delete=True):
            pass
    except OSError as exc:
        raise InputError(
            f"the activation cache {folder} is not writable ({exc.strerror or exc}); "
            "set LIEDAR_CACHE to a folder every worker can write (a shared mount on a cluster)"
        ) from None


# ---- the actor -----------------------------------------------------------------------------


def _encode(inp: TextInput) -> Any:
    return {"dialogue": inp.to_dict()} if isinstance(inp, Dialogue) else inp


def _decode(obj: Any) -> TextInput:
    return Dialogue.from_dict(obj["dialogue"]) if isinstance(obj, dict) else str(obj)


class ShardExtractor:
    """One model per actor; each call answers one or more shards through the cache."""

    def __init__(
        self,
        model: str,
        load_kwargs: dict,
        layers: list[int],
        position: Position,
        root: str,
        fault_marker: Optional[str] = None,
    ):
        from liedar import models

        check_writable(Path(root))  # on this worker's node: a read-only mount is one clear line
        self.backend = models.load(model, **load_kwargs)
        self.layers = self.backend.check_layers(layers)
        self.position = position
        self.root = Path(root)
        self.fault_marker = fault_marker

    def __call__(self, batch: dict) -> dict:
        marker = self.fault_marker
        if marker and not Path(marker).exists() and int(batch["lo"][0]) > 0:  # tests: die once, mid-run
            Path(marker).write_text(str(os.getpid()))
            os._exit(1)
        his, infos = [], []
        for payload in batch["inputs"]:
            inputs = [_decode(x) for x in json.loads(payload)]
            stats: dict = {}
            started = time.perf_counter()
            hidden = cached_hidden_states(
                self.backend,
                inputs,
                self.layers,
                self.position,
                root=self.root,
                shard_size=len(inputs),
                stats=stats,
            )
            his.append(np.ascontiguousarray(hidden, dtype="<f4").tobytes())
            infos.append(
                json.dumps(
                    {
                        **stats,
                        "seconds": time.perf_counter() - started,
                        "pid": os.getpid(),
                        **describe(self.backend),
                    }
                )
            )
        return {"lo": batch["lo"], "hidden": np.array(his, dtype=object), "info": np.array(infos, dtype=object)}


# ---- the driver ----------------------------------------------------------------------------


def ray_hidden_states(
    model: str,
    inputs: Sequence[TextInput],
    layers: Sequence[int],
    position: Position = "last",
    *,
    load_kwargs: Optional[dict] = None,
    root: Optional[Path] = None,
    shard_size: int = SHARD_SIZE,
    concurrency: int = 1,
    num_cpus: float = 1,
    num_gpus: float = 0,
    stats: Optional[dict] = None,
    _fault_marker: Optional[str] = None,
) -> np.ndarray:
    """Same array as ``cached_hidden_states(models.load(model, **load_kwargs), inputs, ...)``,
    computed by ``concurrency`` Ray actors (each ``num_cpus`` / ``num_gpus``) on the current
    Ray cluster (see `ray_session`). ``stats`` receives ``computed``, ``reused``, ``shards``,
    ``workers`` (distinct actor processes), ``seconds_in_actors`` and ``model`` (fingerprint,
    kind, dtype, d_model as the workers loaded it). ``_fault_marker`` is for tests: the first
    actor call past the first shard that finds no file there creates it and kills its process."""
    ray = _require_ray()
    if not ray.is_initialized():
        raise InputError("ray_hidden_states needs a Ray cluster: call it inside models.distributed.ray_session()")
    if isinstance(inputs, (str, bytes)) or len(inputs) == 0:
        raise InputError("inputs must be a non-empty list of strings or Dialogues")
    root = Path(root or cache_root())
    check_writable(root)
    check_resources(ray, concurrency=concurrency, num_cpus=num_cpus, num_gpus=num_gpus)
    layers = [int(x) for x in layers]
    rows = [
        {"lo": lo, "inputs": json.dumps([_encode(x) for x in inputs[lo : lo + shard_size]])}
        for lo in range(0, len(inputs), shard_size)
    ]
    ds = ray.data.from_items(rows, override_num_blocks=len(rows))
    ds = ds.map_batches(
        ShardExtractor,
        fn_constructor_args=(model, dict(load_kwargs or {}), layers, position, str(root), _fault_marker),
        batch_size=1,
        batch_format="numpy",
        # Ray Data's actor pools restart a dead actor and retry its shard by default
        # (max_restarts=-1, max_task_retries=-1); the shard write is atomic and idempotent.
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=num_cpus,
        num_gpus=num_gpus or None,
    )
    out: Optional[np.ndarray] = None  # allocated when the first shard says d_model
    counts = {"computed": 0, "reused": 0, "shards": 0, "seconds_in_actors": 0.0}
    pids: set[int] = set()
    seen: set[int] = set()
    try:
        for row in ds.iter_rows():
            lo = int(row["lo"])
            n = min(shard_size, len(inputs) - lo)
            info = json.loads(row["info"])
            if out is None:
                out = np.empty((len(inputs), len(layers), info["d_model"]), dtype=np.float32)
                counts["model"] = describe_info(info)
            out[lo : lo + n] = np.frombuffer(row["hidden"], dtype="<f4").reshape(n, len(layers), info["d_model"])
            counts["computed"] += info.get("computed", 0)
            counts["reused"] += info.get("reused", 0)
            counts["seconds_in_actors"] += info["seconds"]
            counts["shards"] += 1
            pids.add(info["pid"])
            seen.add(lo)
    except Exception as exc:  # Ray wraps the worker's exception; surface ours as one line
        raise _unwrap(exc) from None
    if out is None or len(seen) != len(rows):
        raise LiedarError(f"Ray returned {len(seen)} of {len(rows)} shards; rerun (finished shards are cached)")
    if stats is not None:
        stats.update(counts, workers=len(pids))
    return out


def _unwrap(exc: BaseException) -> BaseException:
    """The LiedarError inside Ray's wrappers (RayTaskError, UserCodeException...), if any."""
    seen = set()
    cur: Optional[BaseException] = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, LiedarError):
            cls = type(cur)
            # RayTaskError(InputError) subclasses InputError; rebuild a plain one with the worker's line
            base = next((c for c in cls.__mro__ if c.__module__.startswith("liedar.")), LiedarError)
            text = str(cur).strip().splitlines()[-1] if str(cur).strip() else base.__name__
            return base(text.split(": ", 1)[-1] if text.startswith(base.__name__) else text)
        cur = cur.__cause__ or cur.__context__
    text = str(exc).strip().splitlines()
    last = text[-1].strip() if text else type(exc).__name__
    # an actor's constructor error reaches the driver as text only: "liedar.core.errors.InputError: ..."
    match = re.search(r"liedar\.core\.errors\.(\w+): (.*)$", last)
    if match:
        import liedar.core.errors as errors

        cls = getattr(errors, match.group(1), LiedarError)
        if isinstance(cls, type) and issubclass(cls, LiedarError):
            return cls(match.group(2))
    return LiedarError(f"Ray extraction failed: {last}")


MODEL_KEYS = ("name", "fingerprint", "kind", "dtype", "n_layers", "d_model")


def describe_info(info: dict) -> dict:
    return {k: info[k] for k in MODEL_KEYS}


def describe(backend) -> dict:
    """The model as a worker loaded it: its cache key (fingerprint, kind, dtype) and shape."""
    return {
        "name": backend.name,
        "fingerprint": backend.fingerprint,
        "kind": backend.kind,
        "dtype": dtype_of(backend),
        "n_layers": backend.n_layers,
        "d_model": backend.d_model,
    }
