"""Save and load trained probes without pickle.

Why this format: a probe is shared between people and machines, so loading one must never
execute code. A saved probe is one ``.npz`` file (``allow_pickle=False``) holding the
estimator's learned arrays plus a JSON string with the estimator's class name and
constructor parameters and a `ProbeMetadata` record (model, fingerprint, layer, position,
width, training sets, metrics, liedar version). The class is looked up in a fixed
registry of liedar probe types, never imported by name from the file.

Loading refuses a probe made for a different model (fingerprint) or width (d_model) with
`IncompatibleError`, because a direction in one model's residual stream means nothing in
another's. Writes are atomic (temporary file + ``os.replace``).

Sign convention (project-wide): a probe's ``decision_function`` is higher for statements
that are *false* / *deceptive* (``positive_class="false"``), so monitors flag high scores.
"""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from liedar import __version__
from liedar.core._util.atomic import atomic_path
from liedar.core._util.serial import Serial
from liedar.core.errors import IncompatibleError, InputError

FORMAT_VERSION = 1
_META_KEY = "__liedar_probe__"


@dataclass
class ProbeMetadata(Serial):
    """Everything needed to use a saved probe correctly on the right model.

    A direction in one model's residual stream means nothing in another's; the fingerprint
    and width stored here let `load_probe` refuse a probe for the wrong model instead of
    returning meaningless scores.

    Parameters
    ----------
    model_name : str
        Name of the model the probe was trained on.
    model_fingerprint : str
        The backend's fingerprint of that model's weights.
    layer : int
        The hidden-state layer the probe reads.
    position : str
        Token pooling: ``"last"`` or ``"mean"``.
    d_model : int
        Width of the hidden states.
    probe_type : str, optional
        Estimator class name; filled by `save_probe`.
    positive_class : str, default "false"
        Higher ``decision_function`` means false / deceptive.
    training_sets : list of str, optional
        Names of the sets trained on.
    metrics : dict, optional
        Measured quality (AUROC, accuracy, counts) as dictionaries.
    threshold : float, optional
        Decision threshold chosen on training or calibration data.
    liedar_version : str, optional
        liedar version that wrote the probe.
    extra : dict, optional
        Anything else (seed, threshold rule, evaluation).

    Examples
    --------
    >>> meta = ProbeMetadata("smollm2-135m", "ab12", layer=12, position="last", d_model=576)
    >>> ProbeMetadata.from_dict(meta.to_dict()) == meta
    True
    """

    model_name: str
    model_fingerprint: str
    layer: int
    position: str  # "last" | "mean" (see models.backend)
    d_model: int
    probe_type: str = ""  # filled by save_probe from the estimator's class
    positive_class: str = "false"  # higher decision_function = false / deceptive
    training_sets: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    threshold: Optional[float] = None  # decision threshold chosen on training/calibration data
    liedar_version: str = __version__
    extra: dict[str, Any] = field(default_factory=dict)


def _registry() -> dict[str, type]:
    from liedar.probes import estimators

    return {c.__name__: c for c in estimators.PROBE_TYPES}


def probe_path(path: Union[str, Path]) -> Path:
    """The file `save_probe` writes for ``path`` (``.npz`` appended when missing), so a
    command can check that place before any work."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
    return path


def save_probe(path: Union[str, Path], probe: Any, metadata: ProbeMetadata) -> Path:
    """Write ``probe`` (a fitted liedar estimator) and ``metadata`` to ``path`` (.npz).

    Returns the path written. Raises InputError for an unfitted or foreign estimator.

    The file holds plain arrays and JSON only (no pickle), so whoever loads it runs no code
    from it; it is written atomically, so an interrupted save never leaves half a probe.

    Parameters
    ----------
    path : str or Path
        Where to write; ``.npz`` is appended when missing.
    probe : estimator
        A fitted liedar probe (`LogisticProbe`, `MassMeanProbe`, `TTPD`, `LATProbe`,
        `BuergerTTPD`).
    metadata : ProbeMetadata
        Its model, layer and width; ``d_model`` must match the probe's width.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    InputError
        When the probe is not a liedar probe, is unfitted, or its width differs from
        ``metadata.d_model``.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from liedar.probes import MassMeanProbe
    >>> X = np.random.default_rng(0).normal(size=(20, 4))
    >>> X[10:, 0] += 3
    >>> probe = MassMeanProbe().fit(X, [0] * 10 + [1] * 10)
    >>> meta = ProbeMetadata("toy", "ab12", layer=3, position="last", d_model=4)
    >>> path = save_probe(tempfile.mkdtemp() + "/toy", probe, meta)
    >>> path.name
    'toy.npz'
    >>> loaded, meta2 = load_probe(path, expect_d_model=4)
    >>> meta2.probe_type, bool(np.allclose(loaded.coef_, probe.coef_))
    ('MassMeanProbe', True)
    """
    path = probe_path(path)
    cls_name = type(probe).__name__
    if cls_name not in _registry():
        raise InputError(
            f"cannot save a {cls_name}: only liedar probes ({', '.join(sorted(_registry()))}) can be saved"
        )
    arrays = probe.learned_state()
    if arrays is None:
        raise InputError(f"the {cls_name} is not fitted: call fit(X, y) before save_probe")
    d_model = int(np.asarray(arrays["coef_"]).shape[-1])
    if metadata.d_model != d_model:
        raise InputError(f"metadata.d_model={metadata.d_model} but the probe was fitted on {d_model} features")
    meta = ProbeMetadata.from_dict({**metadata.to_dict(), "probe_type": cls_name})
    header = {
        "format_version": FORMAT_VERSION,
        "class": cls_name,
        "params": _json_safe(probe.get_params(deep=False)),
        "metadata": meta.to_dict(),
    }
    payload = {k: np.asarray(v) for k, v in arrays.items()}
    payload[_META_KEY] = np.array(json.dumps(header, sort_keys=True))
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **payload)
    return path


def load_probe(
    path: Union[str, Path],
    *,
    expect_fingerprint: Optional[str] = None,
    expect_d_model: Optional[int] = None,
) -> tuple[Any, ProbeMetadata]:
    """Load a probe saved by `save_probe`; refuse one made for another model or width.

    Every way a file can be damaged or foreign — not a zip, truncated, a corrupt or missing
    header, metadata of the wrong shape, constructor parameters the class does not take,
    arrays of the wrong shape, NaN or infinite coefficients or threshold — is refused with
    one line (`InputError` / `IncompatibleError`) naming the file; nothing else escapes.

    Pass the loaded model's fingerprint and width: a probe trained on another model loads
    without complaint otherwise and scores noise.

    Parameters
    ----------
    path : str or Path
        The ``.npz`` file `save_probe` (or `liedar probe train`) wrote.
    expect_fingerprint : str, optional
        The loaded model's fingerprint (``backend.fingerprint``); refused when different.
    expect_d_model : int, optional
        The loaded model's width (``backend.d_model``); refused when different.

    Returns
    -------
    probe : estimator
        The fitted probe, ready to score.
    metadata : ProbeMetadata
        Its metadata (layer, position, threshold, metrics).

    Raises
    ------
    InputError
        When the file is missing, unreadable, damaged or not a liedar probe.
    IncompatibleError
        When it was made for another model or width, or by an unknown format or probe type.

    Examples
    --------
    >>> probe, meta = load_probe("probe.npz", expect_fingerprint=backend.fingerprint)  # doctest: +SKIP
    >>> scores = probe.decision_function(hidden_states)  # doctest: +SKIP
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"probe file not found: {path} (train one with `liedar probe train`)")
    fix = "re-save it with `liedar probe train`, or give the .npz that command wrote"
    _check_archive_kind(path, fix)
    try:
        with np.load(path, allow_pickle=False) as data:
            if not hasattr(data, "files"):
                raise ValueError("a bare array, not an .npz archive")
            arrays = {k: np.asarray(data[k]) for k in data.files}
    except Exception as exc:  # zipfile, zlib, numpy and OS errors all mean "unreadable"
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"{path} is not a liedar probe file (unreadable .npz without pickle: {reason}); {fix}"
        ) from None
    if _META_KEY not in arrays:
        raise InputError(f"{path} is an .npz file but not a liedar probe (no metadata record); {fix}")
    header = _read_header(path, arrays.pop(_META_KEY), fix)
    meta = _read_metadata(path, header["metadata"], fix)
    if expect_fingerprint is not None and meta.model_fingerprint != expect_fingerprint:
        raise IncompatibleError(
            f"{path} was trained on model {meta.model_name!r} (fingerprint {meta.model_fingerprint[:12]}), "
            f"not on the loaded model (fingerprint {expect_fingerprint[:12]}): retrain the probe for this model"
        )
    if expect_d_model is not None and meta.d_model != int(expect_d_model):
        raise IncompatibleError(
            f"{path} expects hidden states of width {meta.d_model}, but the model has width {expect_d_model}: "
            "retrain the probe for this model"
        )
    cls = _registry().get(header["class"]) if isinstance(header["class"], str) else None
    if cls is None:
        raise IncompatibleError(
            f"{path} holds an unknown probe type {header['class']!r}: liedar loads {', '.join(sorted(_registry()))}"
        )
    params = _from_json(header["params"])
    if not isinstance(params, dict):
        raise InputError(f"{path}: probe parameters must be a JSON object, got {type(params).__name__}; {fix}")
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise InputError(
            f"{path}: {cls.__name__} takes no parameter(s) {', '.join(map(repr, unknown))} "
            f"(it takes {', '.join(sorted(accepted)) or 'none'}); {fix}"
        )
    try:
        probe = cls(**params)
        probe.restore_state(arrays)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
        raise InputError(f"{path}: the saved {cls.__name__} cannot be rebuilt ({exc}); {fix}") from None
    _check_arrays(path, probe, meta, fix)
    return probe, meta


def _check_archive_kind(path: Path, fix: str) -> None:
    """Name what the file is when it is not a zip archive at all.

    Why before `np.load`: numpy treats any file without the zip or ``.npy`` magic as a
    pickle and says it "contains pickled data", which misleads a user who gave a CSV or a
    text file by mistake.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
    except OSError as exc:
        raise InputError(f"cannot read probe file {path}: {exc.strerror or exc}") from None
    if head.startswith(b"PK"):
        return
    if head.startswith(b"\x93NUMPY"):
        what = "a bare .npy array"
    elif head[:1] == b"\x80":
        what = "a Python pickle, which liedar never loads"
    elif not head:
        what = "empty"
    else:
        what = "not a zip archive (a probe file is the .npz `liedar probe train` writes; this looks like text)"
        if any(b < 9 or 13 < b < 32 for b in head):
            what = "not a zip archive (a probe file is the .npz `liedar probe train` writes)"
    raise InputError(f"{path} is not a liedar probe file: {what}; {fix}")


def _read_header(path: Path, raw: np.ndarray, fix: str) -> dict[str, Any]:
    try:
        if raw.dtype.kind != "U" or raw.ndim != 0:
            raise ValueError
        header = json.loads(str(raw))
    except ValueError:
        raise InputError(f"{path}: the probe's metadata record is not valid JSON text; {fix}") from None
    if not isinstance(header, dict):
        raise InputError(f"{path}: the probe's metadata record is not a JSON object; {fix}")
    if header.get("format_version") != FORMAT_VERSION:
        raise IncompatibleError(
            f"{path} uses probe format {header.get('format_version')!r}; this liedar reads format {FORMAT_VERSION}"
        )
    missing = [k for k in ("class", "params", "metadata") if k not in header]
    if missing:
        raise InputError(f"{path}: the probe's metadata record lacks {', '.join(missing)}; {fix}")
    return header


_META_TYPES: dict[str, tuple[type, ...]] = {
    "model_name": (str,),
    "model_fingerprint": (str,),
    "layer": (int,),
    "position": (str,),
    "d_model": (int,),
    "probe_type": (str,),
    "positive_class": (str,),
    "training_sets": (list,),
    "metrics": (dict,),
    "threshold": (int, float, type(None)),
    "liedar_version": (str,),
    "extra": (dict,),
}
_POSITIONS = ("last", "mean")  # the poolings `liedar probe train` saves (models.backend.Position)
_META_REQUIRED = ("model_name", "model_fingerprint", "layer", "position", "d_model")


def _read_metadata(path: Path, raw: Any, fix: str) -> ProbeMetadata:
    """A `ProbeMetadata` whose every field has its documented type and a usable value."""
    if not isinstance(raw, dict):
        raise InputError(f"{path}: the probe's metadata is not a JSON object; {fix}")
    missing = [k for k in _META_REQUIRED if k not in raw]
    if missing:
        raise InputError(f"{path}: the probe's metadata lacks {', '.join(missing)}; {fix}")
    for key, kinds in _META_TYPES.items():
        if key in raw and (not isinstance(raw[key], kinds) or isinstance(raw[key], bool)):
            names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            raise InputError(f"{path}: metadata {key} must be {names}, got {type(raw[key]).__name__}; {fix}")
    if raw["layer"] < 0 or raw["d_model"] < 1:
        raise InputError(f"{path}: metadata layer {raw['layer']} / d_model {raw['d_model']} is out of range; {fix}")
    if raw["position"] not in _POSITIONS:
        raise InputError(
            f"{path}: metadata position {raw['position']!r} is not one of {', '.join(_POSITIONS)} "
            f"(the token pooling a probe is trained with); {fix}"
        )
    threshold = raw.get("threshold")
    if threshold is not None and not math.isfinite(threshold):
        raise InputError(f"{path}: the probe's threshold is {threshold}, not a finite number; recalibrate it")
    return ProbeMetadata.from_dict(raw)


def _check_arrays(path: Path, probe: Any, meta: ProbeMetadata, fix: str) -> None:
    """Shapes that fit the metadata and finite numbers: a NaN coefficient scores every token
    NaN, and a monitor must never read NaN as "not flagged"."""
    coef = np.asarray(probe.coef_)
    if coef.dtype.kind not in "fiu" or coef.ndim != 1 or coef.shape[0] != meta.d_model:
        raise InputError(
            f"{path}: coefficients of shape {coef.shape} ({coef.dtype}) do not match width {meta.d_model}; {fix}"
        )
    for name in ("coef_", "intercept_", "direction_"):
        arr = np.asarray(getattr(probe, name, np.zeros(1)))
        if arr.dtype.kind not in "fiu" or arr.size == 0:
            raise InputError(f"{path}: the probe's {name} is not a numeric array; {fix}")
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{path}: the probe's {name} holds NaN or infinity; retrain the probe")
    for name, arr in vars(probe).items():
        if name.endswith("_") and isinstance(arr, np.ndarray) and arr.dtype.kind == "f" and not np.isfinite(arr).all():
            raise InputError(f"{path}: the probe's {name} holds NaN or infinity; retrain the probe")


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (
            {"__tuple__": [_json_safe(v) for v in value]}
            if isinstance(value, tuple)
            else [_json_safe(v) for v in value]
        )
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise InputError(f"probe parameter of type {type(value).__name__} cannot be saved as JSON")


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(_from_json(v) for v in value["__tuple__"])
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value
