"""Pick a monitor threshold from honest (control) scores for a target false-positive rate.

Why a split: a threshold chosen on the same scores it is judged on always looks right.
The control scores are shuffled (seeded) and cut in two: the threshold comes from the
*calibration* part, and the false-positive rate a user should expect is measured on the
*held-out* part, reported as an `Estimate` with an exact (Clopper-Pearson) interval.

The threshold is the conformal quantile of the calibration scores: with n calibration
scores the threshold is the ceil((1 - fpr) * (n + 1))-th smallest, so that a fresh honest
score exceeds it with probability at most ``fpr`` (for exchangeable scores). When n is too
small for that rank to exist (n < 1/fpr - 1), the threshold falls back to the largest
calibration score and the result carries a note saying the target cannot be guaranteed.

A response is *flagged* when its score is strictly greater than the threshold (probe
convention: higher = more likely deceptive).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.core.stats import Estimate, clopper_pearson
from liedar.models.chat import Dialogue, TextInput

HONEST_LABELS = frozenset({"honest", "control", "truthful", "true"})
DECEPTIVE_LABELS = frozenset({"deceptive", "lie", "false", "dishonest"})


@dataclass
class ThresholdCalibration(Serial):
    """A threshold and the evidence for it."""

    threshold: float
    target_fpr: float
    achieved_fpr: Estimate  # on the held-out part, never on the calibration part
    calibration_fpr: float
    n_calibration: int
    n_held_out: int
    seed: int
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def conformal_threshold(scores: Sequence[float], target_fpr: float) -> tuple[float, bool]:
    """The threshold for ``target_fpr`` from honest scores, and whether the guarantee holds.

    Returns ``(threshold, guaranteed)``; ``guaranteed`` is False when there are too few
    scores for the conformal rank, in which case the largest score is returned.
    """
    arr = np.sort(np.asarray(scores, dtype=np.float64))
    if arr.size == 0:
        raise InputError("cannot calibrate a threshold from 0 honest scores: give at least one")
    if not np.all(np.isfinite(arr)):
        raise InputError("honest scores contain NaN or infinity: check the probe and inputs")
    if not 0.0 < target_fpr < 1.0:
        raise InputError(f"target FPR {target_fpr} must lie strictly between 0 and 1 (e.g. 0.01)")
    rank = math.ceil((1.0 - target_fpr) * (arr.size + 1))  # 1-based
    if rank > arr.size:
        return float(arr[-1]), False
    return float(arr[rank - 1]), True


def calibrate_threshold(
    honest_scores: Sequence[float],
    target_fpr: float = 0.01,
    *,
    held_out_fraction: float = 0.5,
    seed: int = 0,
    confidence: float = 0.95,
) -> ThresholdCalibration:
    """Choose the threshold on one part of the honest scores, report the FPR on the rest.

    A threshold judged on the scores it was chosen from always looks right; the held-out
    false-positive rate (with an exact interval) is what a user should expect in use.

    Parameters
    ----------
    honest_scores : sequence of float
        Monitor scores of honest (control) responses, e.g. from `HonestyMonitor.score_many`.
    target_fpr : float, default 0.01
        The false-positive rate to aim for, in (0, 1).
    held_out_fraction : float, default 0.5
        Share of the scores kept out to measure the achieved rate on.
    seed : int, default 0
        Seed of the shuffle that splits the scores.
    confidence : float, default 0.95
        Coverage of the achieved rate's interval.

    Returns
    -------
    ThresholdCalibration
        ``threshold``, ``achieved_fpr`` (an Estimate on the held-out part), the counts and a
        note when there were too few calibration scores to guarantee the target.

    Raises
    ------
    InputError
        When a score is not finite, there are fewer than 2 scores, or a fraction or rate is
        outside (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> cal = calibrate_threshold(np.random.default_rng(0).normal(size=400), target_fpr=0.05)
    >>> round(cal.threshold, 3), cal.n_calibration, cal.n_held_out
    (1.594, 200, 200)
    >>> print(cal.achieved_fpr)
    0.045 [0.021, 0.084] (n=200, clopper-pearson)
    """
    scores = np.asarray(honest_scores, dtype=np.float64).ravel()
    if not np.all(np.isfinite(scores)):  # a NaN held-out score would never count as a false positive
        raise InputError("honest scores contain NaN or infinity: check the probe and inputs")
    if scores.size < 2:
        raise InputError(
            f"need at least 2 honest control scores to calibrate and hold out, got {scores.size}:"
            " add honest items to the control file"
        )
    if not 0.0 < held_out_fraction < 1.0:
        raise InputError(f"held_out_fraction {held_out_fraction} must lie strictly between 0 and 1")
    rng = np.random.default_rng(seed)
    order = rng.permutation(scores.size)
    n_held = min(scores.size - 1, max(1, round(scores.size * held_out_fraction)))
    held, calib = scores[order[:n_held]], scores[order[n_held:]]
    threshold, guaranteed = conformal_threshold(calib, target_fpr)
    n_false_pos = int(np.sum(held > threshold))
    achieved = clopper_pearson(n_false_pos, held.size, confidence, kind="quality")
    note = (
        ""
        if guaranteed
        else (
            f"only {calib.size} calibration scores: at least {math.ceil(1 / target_fpr - 1)} are needed"
            f" to target FPR {target_fpr}; the threshold is the largest calibration score"
        )
    )
    return ThresholdCalibration(
        threshold=threshold,
        target_fpr=target_fpr,
        achieved_fpr=achieved,
        calibration_fpr=float(np.mean(calib > threshold)),
        n_calibration=int(calib.size),
        n_held_out=int(held.size),
        seed=seed,
        note=note,
    )


@dataclass(frozen=True)
class Transcript:
    """One recorded exchange: what the model was asked, what it answered, and its label."""

    prompt: TextInput
    response: Optional[str]  # None when `prompt` is a dialogue whose detect turns are the response
    label: Optional[str]  # "honest", "deceptive" or None (unlabelled)
    id: str


def load_transcripts(path: Union[str, Path], *, default_label: Optional[str] = None) -> list[Transcript]:
    """Read a JSONL file of transcripts, one JSON object per line, one of:
    ``{"prompt": "...", "response": "...", "label": "honest"}`` or
    ``{"dialogue": [{"role": ..., "content": ..., "detect": ...}, ...], "label": "deceptive"}``;
    an optional ``id`` names the line in outputs (default: its line number). Labels
    are normalised to ``honest`` / ``deceptive`` (synonyms: control, truthful, true /
    lie, false, dishonest); a missing label takes ``default_label``. An empty file gives
    an empty list: what that means is the caller's to say.
    """
    from liedar.core._util.jsonl import check_field, iter_jsonl

    path = Path(path)
    if not path.is_file():
        raise InputError(f"transcript file {path} does not exist: give a JSONL file of transcripts")
    items: list[Transcript] = []
    for lineno, row in iter_jsonl(path, expected=TRANSCRIPT_SHAPE):
        raw = check_field(row, "label", "str", f"{path}:{lineno}", required=False)
        raw = default_label if raw is None else raw
        check_field(row, "id", "id", f"{path}:{lineno}", required=False)
        label = None if raw is None else str(raw).lower()
        if label is not None and label not in HONEST_LABELS | DECEPTIVE_LABELS:
            raise InputError(f"{path}:{lineno} has label {label!r}: use 'honest' (or 'control') or 'deceptive'")
        label = None if label is None else ("honest" if label in HONEST_LABELS else "deceptive")
        prompt, response = _parse_exchange(row, path, lineno)
        items.append(Transcript(prompt, response, label, str(row.get("id", lineno))))
    return items


def load_control_file(path: Union[str, Path]) -> list[Transcript]:
    """The *honest* transcripts of a control file (``label`` defaults to honest: a control
    file is honest by definition; lines labelled deceptive are skipped). Raises
    InputError when no honest item remains."""
    items = [t for t in load_transcripts(path, default_label="honest") if t.label == "honest"]
    if not items:
        raise InputError(
            f"control file {path} has no honest items: add lines labelled 'honest'"
            " (deceptive lines are ignored when calibrating)"
        )
    return items


TRANSCRIPT_SHAPE = '{"prompt": "...", "response": "...", "label": "honest"} or {"dialogue": [...], "label": ...}'


def _parse_exchange(row: dict, path: Path, lineno: int) -> tuple[TextInput, Optional[str]]:
    from liedar.core._util.jsonl import check_dialogue

    if "dialogue" in row:
        dialogue = Dialogue.from_dict(check_dialogue(row["dialogue"], f"{path}:{lineno}"))
        if not any(m.detect for m in dialogue.messages):
            raise InputError(
                f"{path}:{lineno} dialogue has no message with detect=true: mark the assistant turn to score"
            )
        return dialogue, None
    prompt, response = row.get("prompt"), row.get("response")
    if not isinstance(prompt, str) or not prompt.strip() or not isinstance(response, str) or not response.strip():
        raise InputError(f"{path}:{lineno} needs non-empty 'prompt' and 'response' strings (or a 'dialogue')")
    return prompt, response
