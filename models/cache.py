"""On-disk activation cache: extract once, resume after a crash, never serve another model's.

Layout (under the liedar cache root, see models.storage)::

    activations/<fingerprint[:24]>-<backend kind>[-<dtype>]/<position>/layer-<i>/<shard id>.npz

The dtype the model ran in is part of the key (a bf16 model's activations are not an fp32
model's): float32, the default, keeps the original layout so existing caches stay valid;
other dtypes get a ``-bfloat16`` / ``-float16`` suffix and a ``dtype`` field in each shard's
metadata. The Ray path (models.distributed) writes the very same shards from its workers.

A shard holds ``shard_size`` consecutive inputs; its id is a hash of their input hashes,
so the same inputs map to the same files whatever list they arrive in. Each file is a plain
npz (``hidden`` float32 [n, d], ``input_hashes``, ``meta`` JSON) read with
``allow_pickle=False``: nothing in the cache can execute code. A file is written to a
temporary name and renamed into place, so a SIGKILL leaves either no file or a whole one; a
resumed extraction recomputes only shards that are missing, unreadable, or whose stored
metadata (full fingerprint, backend, layer, position, input hashes) does not match.

Every shard also records its array's shape and the sha256 of its bytes; a shard whose
content no longer matches, or that holds NaN or infinity, is recomputed and replaced (one
note line per call). Non-finite activations are never written or returned: a model that
produces them (damaged weights, an overflow) stops the extraction with an error naming
the input and layer, because a probe trained on them would be meaningless.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from liedar.core.errors import IncompatibleError, InputError
from liedar.models.backend import Position, Span
from liedar.models.chat import Dialogue, TextInput
from liedar.models.storage import atomic_file, cache_root, note

SHARD_SIZE = 64  # inputs per shard; the Ray path cuts its work at the same boundaries


def dtype_of(backend) -> str:
    """The precision a backend runs its model in (backends without the notion: float32)."""
    return str(getattr(backend, "dtype_name", "float32"))


def activation_dir(backend, position: Position, root: Optional[Path] = None) -> Path:
    """The cache folder of one (model, backend kind, dtype, position)."""
    dtype = dtype_of(backend)
    suffix = "" if dtype == "float32" else f"-{dtype}"
    return (
        Path(root or cache_root())
        / "activations"
        / f"{backend.fingerprint[:24]}-{backend.kind}{suffix}"
        / position_key(position)
    )


def input_hash(inp: TextInput) -> str:
    if isinstance(inp, Dialogue):
        payload = json.dumps({"dialogue": inp.to_dict()}, sort_keys=True)
    elif isinstance(inp, str):
        payload = json.dumps({"text": inp})
    else:
        raise InputError(f"inputs must be str or Dialogue, got {type(inp).__name__}")
    return hashlib.sha256(payload.encode()).hexdigest()


def position_key(position: Position) -> str:
    if isinstance(position, Span):
        return f"span-{position.start}-{position.end}"
    if position in ("last", "mean"):
        return str(position)
    raise InputError(f"unknown position {position!r}: use 'last', 'mean' or models.backend.Span(start, end)")


def cached_hidden_states(
    backend,
    inputs: Sequence[TextInput],
    layers: Sequence[int],
    position: Position = "last",
    *,
    root: Optional[Path] = None,
    shard_size: int = SHARD_SIZE,
    progress: bool = False,
    stats: Optional[dict] = None,
) -> np.ndarray:
    """Same result as ``backend.hidden_states(inputs, layers, position)``, through the cache.

    ``stats`` (if given) receives ``computed`` and ``reused`` input counts, and ``damaged``
    (shards that failed verification and were recomputed) when there were any.
    """
    layers = backend.check_layers(layers)
    if isinstance(inputs, (str, bytes)) or len(inputs) == 0:
        raise InputError("inputs must be a non-empty list of strings or Dialogues")
    base = activation_dir(backend, position, root)
    hashes = [input_hash(x) for x in inputs]
    out = np.empty((len(inputs), len(layers), backend.d_model), dtype=np.float32)
    counts = {"computed": 0, "reused": 0, "damaged": 0}
    bar = None
    if progress:
        from liedar.core._util.progress import progress as step_progress

        bar = step_progress(total=len(inputs), desc=f"extract {backend.name}", unit="input")
    for lo in range(0, len(inputs), shard_size):
        shard_hashes = hashes[lo : lo + shard_size]
        shard_id = hashlib.sha256("".join(shard_hashes).encode()).hexdigest()[:32]
        meta = {"fingerprint": backend.fingerprint, "kind": backend.kind, "position": position_key(position)}
        if dtype_of(backend) != "float32":
            meta["dtype"] = dtype_of(backend)
        missing = []
        for j, layer in enumerate(layers):
            path = base / f"layer-{layer}" / f"{shard_id}.npz"
            got = _read(path, {**meta, "layer": layer}, shard_hashes, backend.d_model)
            if got is _DAMAGED:
                counts["damaged"] += 1
                got = None
            if got is None:
                missing.append(j)
            else:
                out[lo : lo + len(shard_hashes), j] = got
        if missing:
            fresh = backend.hidden_states(list(inputs[lo : lo + shard_size]), [layers[j] for j in missing], position)
            fresh = np.asarray(fresh, dtype=np.float32)
            _require_finite(fresh, [layers[j] for j in missing], lo, backend.name)
            for k, j in enumerate(missing):
                path = base / f"layer-{layers[j]}" / f"{shard_id}.npz"
                _write(path, fresh[:, k], {**meta, "layer": layers[j]}, shard_hashes)
                out[lo : lo + len(shard_hashes), j] = fresh[:, k]
            counts["computed"] += len(shard_hashes)
        else:
            counts["reused"] += len(shard_hashes)
        if bar is not None:
            bar.update(len(shard_hashes))
    if bar is not None:
        bar.close()
    if counts["damaged"]:
        note(f"{counts['damaged']} damaged activation shard(s) in {base} were recomputed and replaced")
    if stats is not None:
        stats.update({k: v for k, v in counts.items() if v or k != "damaged"})
    return out


_DAMAGED = np.empty(0)  # sentinel: the shard exists but failed verification


def _digest(hidden: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(hidden, dtype="<f4").tobytes()).hexdigest()


def _require_finite(fresh: np.ndarray, layers: list[int], offset: int, model: str) -> None:
    bad = ~np.isfinite(fresh)
    if bad.any():
        row, col = (int(x[0]) for x in np.nonzero(bad.any(axis=2)))
        raise IncompatibleError(
            f"{model} produced NaN or infinite hidden states (input {offset + row}, layer {layers[col]}); "
            "nothing was cached: the weights may be damaged — delete the model's cache entry or reinstall it"
        )


def _read(path: Path, meta: dict, hashes: list[str], d_model: int) -> Optional[np.ndarray]:
    """The shard's array; None when absent or made for something else; `_DAMAGED` when it
    exists but its bytes, shape or values fail the check recorded at write time."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            stored = json.loads(str(npz["meta"]))
            if stored != meta or list(npz["input_hashes"]) != hashes:
                return None
            hidden = np.asarray(npz["hidden"], dtype=np.float32)
            digest = str(npz["digest"])
    except Exception:  # a damaged file is recomputed and replaced, never served
        return _DAMAGED
    if hidden.shape != (len(hashes), d_model) or digest != _digest(hidden) or not np.isfinite(hidden).all():
        return _DAMAGED
    return hidden


def _write(path: Path, hidden: np.ndarray, meta: dict, hashes: list[str]) -> None:
    hidden = np.ascontiguousarray(hidden, dtype=np.float32)
    if not np.isfinite(hidden).all():  # callers check first; this is the last line of defence
        raise IncompatibleError(f"refusing to cache non-finite activations at {path}")
    with atomic_file(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                hidden=hidden,
                input_hashes=np.array(hashes),
                meta=np.array(json.dumps(meta, sort_keys=True)),
                digest=np.array(_digest(hidden)),
            )
