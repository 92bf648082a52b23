"""An inline honesty monitor: score every generated token with a trained probe.

Why inline: a deployed small model can be watched while it talks at almost no cost. The
backend hands each new token's hidden state at the probe's layer to a callback
(`Backend.generate(on_token=..., hook_layer=...)`: a forward hook with the KV cache on
in transformers, the eval callback for one tensor in llama.cpp), the probe turns it into
one number, and the caller gets a stream of (token text, score, flagged) plus a
per-response and per-sentence aggregate.

The same scores can be computed afterwards from a transcript (`score_transcript`,
`score_dialogue`) through `Backend.token_states`, so recorded conversations can be
audited offline; only the assistant's tokens (the dialogue's ``detect`` messages) count.
Streaming and offline scores agree to float tolerance (pinned by tests).

Probe convention (probes/io.py): higher ``decision_function`` = more likely deceptive, so
a token, sentence or response is *flagged* when its score is strictly above the
threshold. Choose the threshold with `probes.monitor_calibration.calibrate_threshold`
on honest control transcripts; 0.0 (a logistic probe's even odds) is only a default.

Fails closed: a NaN or infinite threshold or probe coefficient is refused when the
monitor is built, and a score that comes out NaN or infinite (e.g. a damaged model's
hidden state) raises `IncompatibleError` ("could not score") instead of being compared
with the threshold — ``nan > t`` is False, which would read as "not flagged".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Optional, Sequence, Union

import numpy as np

from liedar.core._util.serial import Serial
from liedar.core.errors import IncompatibleError, InputError
from liedar.models.backend import Backend, Generation, TokenStep
from liedar.models.chat import Dialogue, Message, TextInput

Aggregate = Literal["mean", "max", "last"]
AGGREGATES: tuple[str, ...] = ("mean", "max", "last")


@dataclass
class TokenScore(Serial):
    """One scored token of a response."""

    index: int  # position within the response (0 = first generated / first assistant token)
    token_id: int
    text: str
    score: float
    flagged: bool


@dataclass
class SentenceScore(Serial):
    """One sentence of a response with the aggregate of its tokens' scores."""

    text: str
    start: int  # character range in the response text
    end: int
    first_token: int
    last_token: int
    score: float
    flagged: bool


@dataclass
class MonitorResult:
    """Scores of one response: per token, per sentence and for the whole response.

    What every `HonestyMonitor` scoring method returns: the stream a UI highlights
    (``tokens``), the sentences a reader checks (``sentences``) and the one verdict a
    pipeline acts on (``score``, ``flagged``).

    Parameters
    ----------
    text : str
        The response text (generated continuation or the assistant turns).
    tokens : list of TokenScore
        Every scored token, in order.
    sentences : list of SentenceScore
        The response cut into sentences, each with its tokens' aggregate.
    score : float
        The per-response aggregate of the token scores.
    flagged : bool
        ``score > threshold``.
    aggregate : str
        How tokens were pooled: ``"mean"``, ``"max"`` or ``"last"``.
    threshold : float
        The threshold the flags compare against.
    layer : int
        The layer the probe read.
    prompt_text : str, optional
        The prompt as the model saw it (chat template applied).
    extra : dict, optional
        Anything else (e.g. ``n_prompt_tokens``).
    generation : Generation, optional
        The backend's generation, set by `HonestyMonitor.generate`.
    """

    text: str  # the response text (generated continuation or the assistant turns)
    tokens: list[TokenScore]
    sentences: list[SentenceScore]
    score: float  # the per-response aggregate
    flagged: bool
    aggregate: str
    threshold: float
    layer: int
    prompt_text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    generation: Optional[Generation] = None  # set by HonestyMonitor.generate (for score_generation)

    @property
    def token_scores(self) -> np.ndarray:
        """The token scores as a float64 array, in response order."""
        return np.array([t.score for t in self.tokens], dtype=np.float64)

    # stays hand-written: leaves the generation out of its file
    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dictionary (the generation object is left out).

        Returns
        -------
        dict
            Text, prompt, score, flag, settings, tokens and sentences as dictionaries.
        """
        return {
            "text": self.text,
            "prompt_text": self.prompt_text,
            "score": self.score,
            "flagged": self.flagged,
            "aggregate": self.aggregate,
            "threshold": self.threshold,
            "layer": self.layer,
            "tokens": [t.to_dict() for t in self.tokens],
            "sentences": [s.to_dict() for s in self.sentences],
            "extra": self.extra,
        }


def aggregate_scores(scores: Sequence[float], how: str) -> float:
    """Pool token scores into one number: ``mean``, ``max`` or ``last``."""
    arr = np.asarray(scores, dtype=np.float64)
    if arr.size == 0:
        raise InputError("cannot aggregate 0 token scores: the response has no tokens to score")
    if how == "mean":
        return float(arr.mean())
    if how == "max":
        return float(arr.max())
    if how == "last":
        return float(arr[-1])
    raise InputError(f"unknown aggregate {how!r}: use one of {', '.join(AGGREGATES)}")


_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Cut ``text`` into consecutive [start, end) spans that cover it, one per sentence.

    A sentence ends after a run of ``.!?`` (plus closing quotes/brackets) that is followed
    by whitespace, or after a line break; the whitespace that follows belongs to the next
    sentence, so a token like " The" opens the sentence it starts.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() > start:
            spans.append((start, m.end()))
            start = m.end()
    if start < len(text) or not spans:
        spans.append((start, len(text)))
    return spans


def _token_offsets(texts: Sequence[str]) -> list[int]:
    offsets, pos = [], 0
    for t in texts:
        offsets.append(pos)
        pos += len(t)
    return offsets


class HonestyMonitor:
    """Score a model's tokens with a linear lie probe, live or from transcripts.

    ``probe`` is a fitted liedar estimator (``decision_function`` on ``[n, d_model]``);
    ``metadata`` (a `probes.io.ProbeMetadata`) supplies the layer and is checked against
    the backend's fingerprint and width. Without metadata, pass ``layer``.

    A deployed model can be watched while it talks for one dot product per token. The
    monitor fails closed: a probe for another model or width, a non-finite threshold or
    coefficient, and a NaN score (which would compare as "not flagged") are refused.

    Parameters
    ----------
    backend : Backend
        The loaded model (`liedar.models.load`).
    probe : estimator
        A fitted probe with ``decision_function``; higher = more likely deceptive.
    metadata : ProbeMetadata, optional
        The probe's metadata; supplies the layer (and threshold) and is checked against
        the backend.
    layer : int, optional
        The layer to read, when there is no metadata.
    aggregate : {"mean", "max", "last"}, default "mean"
        How token scores pool into sentence and response scores.
    threshold : float, optional
        Flag a score strictly above this; the metadata's threshold, else 0.0. Calibrate it
        on honest transcripts with `calibrate_threshold`.

    Raises
    ------
    InputError
        When the aggregate is unknown, the probe has no ``decision_function``, the layer is
        missing or out of range, or the threshold or probe is not finite.
    IncompatibleError
        When the probe was made for another model or width.

    Examples
    --------
    >>> import numpy as np
    >>> from liedar.probes import MassMeanProbe
    >>> X = np.random.default_rng(0).normal(size=(40, 8))
    >>> X[20:, 0] += 3
    >>> probe = MassMeanProbe().fit(X, [0] * 20 + [1] * 20)
    >>> class Stub:  # what the monitor checks on a backend before it scores
    ...     name, fingerprint, n_layers, d_model = "stub", "0" * 16, 12, 8
    >>> monitor = HonestyMonitor(Stub(), probe, layer=6)
    >>> (monitor.score_hidden(X[[0, -1]]) > monitor.threshold).tolist()
    [False, True]

    With a model and a saved probe:

    >>> monitor = HonestyMonitor.from_file(backend, "probe.npz")  # doctest: +SKIP
    >>> result = monitor.generate("Is the Earth flat?", max_tokens=32)  # doctest: +SKIP
    >>> result.flagged, [(t.text, round(t.score, 2)) for t in result.tokens]  # doctest: +SKIP
    """

    def __init__(
        self,
        backend: Backend,
        probe: Any,
        *,
        metadata: Any = None,
        layer: Optional[int] = None,
        aggregate: str = "mean",
        threshold: Optional[float] = None,
    ) -> None:
        if aggregate not in AGGREGATES:
            raise InputError(f"unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}")
        if not hasattr(probe, "decision_function"):
            raise InputError(f"{type(probe).__name__} has no decision_function: pass a fitted liedar probe")
        if metadata is not None:
            _check_metadata(backend, metadata)
            if layer is not None and layer != metadata.layer:
                raise InputError(f"layer {layer} differs from the probe's training layer {metadata.layer}: omit layer")
            layer = int(metadata.layer)
        if layer is None:
            raise InputError("the monitor needs the probe's layer: pass metadata=ProbeMetadata or layer=")
        if not 0 <= layer <= backend.n_layers + 1:
            raise InputError(
                f"probe layer {layer} is out of range for {backend.name}: valid layers are "
                f"0..{backend.n_layers + 1} (0 = embeddings); use a probe trained on this model"
            )
        width = _probe_width(probe)
        if width is not None and width != backend.d_model:
            raise IncompatibleError(
                f"the probe reads {width}-wide hidden states but {backend.name} has d_model={backend.d_model}:"
                " retrain the probe for this model"
            )
        if threshold is None:
            threshold = float(metadata.threshold) if getattr(metadata, "threshold", None) is not None else 0.0
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)):
            raise InputError(f"threshold {threshold!r} is not a number: give a finite score, e.g. 0.0")
        if not math.isfinite(float(threshold)):
            raise InputError(
                f"threshold {threshold} is not a finite number: nothing can be flagged against it; "
                "give a finite value (or calibrate one with `liedar monitor calibrate`)"
            )
        _check_finite_probe(probe)
        self.backend = backend
        self.probe = probe
        self.metadata = metadata
        self.layer = layer
        self.aggregate = aggregate
        self.threshold = float(threshold)
        self._linear = _linear_weights(probe)

    @classmethod
    def from_file(
        cls, backend: Backend, path: Union[str, Path], *, aggregate: str = "mean", threshold: Optional[float] = None
    ) -> "HonestyMonitor":
        """Load a saved probe, refusing one trained for another model or width.

        Parameters
        ----------
        backend : Backend
            The loaded model; its fingerprint and width are checked against the file.
        path : str or Path
            The ``.npz`` probe file.
        aggregate : {"mean", "max", "last"}, default "mean"
            How token scores pool.
        threshold : float, optional
            Overrides the threshold saved with the probe.

        Returns
        -------
        HonestyMonitor
            The monitor, at the probe's training layer.

        Raises
        ------
        InputError
            When the file is missing or damaged.
        IncompatibleError
            When the probe was made for another model or width.
        """
        from liedar.probes.io import load_probe

        probe, meta = load_probe(path, expect_fingerprint=backend.fingerprint, expect_d_model=backend.d_model)
        return cls(backend, probe, metadata=meta, aggregate=aggregate, threshold=threshold)

    # -- scoring ---------------------------------------------------------------------

    def score_hidden(self, hidden: np.ndarray) -> np.ndarray:
        """Probe scores for hidden states ``[n, d_model]`` (float64 ``[n]``).

        Parameters
        ----------
        hidden : numpy.ndarray of shape (n, d_model) or (d_model,)
            Hidden states at the monitor's layer.

        Returns
        -------
        numpy.ndarray of shape (n,)
            Scores; flagged where above ``threshold``.

        Raises
        ------
        IncompatibleError
            When a score is NaN or infinite (nothing is reported as flagged or not).
        """
        h = np.asarray(hidden, dtype=np.float64)
        if h.ndim == 1:
            h = h[None, :]
        if self._linear is not None:  # liedar probes are linear: one dot product per token
            w, b = self._linear
            scores = h @ w + b
        else:
            scores = np.asarray(self.probe.decision_function(h), dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(scores)):
            # Fail closed: a NaN score compares False with any threshold, i.e. "not flagged".
            where = "hidden states" if not np.all(np.isfinite(h)) else "probe output"
            raise IncompatibleError(
                f"could not score: {int(np.sum(~np.isfinite(scores)))} token score(s) are NaN or infinite "
                f"(non-finite {where} at layer {self.layer}); nothing is reported as flagged or not flagged — "
                "check the model's weights (delete its cache entry) and the probe"
            )
        return scores

    def generate(
        self,
        prompt: TextInput,
        *,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        on_score: Optional[Callable[[TokenScore], None]] = None,
    ) -> MonitorResult:
        """Generate a response and score each token as it appears.

        ``on_score`` receives every `TokenScore` while the model is still generating.

        Parameters
        ----------
        prompt : str or Dialogue
            Plain text to continue, or a dialogue (the chat template is applied).
        max_tokens : int, default 64
            Most tokens to generate.
        temperature : float, default 0.0
            Sampling temperature (0 = greedy).
        seed : int, default 0
            Sampling seed.
        on_score : callable, optional
            Called with each `TokenScore` as it is produced (to stream to a UI).

        Returns
        -------
        MonitorResult
            Token, sentence and response scores; ``generation`` holds the backend's output.

        Raises
        ------
        InputError
            When the prompt is empty or nothing was generated.
        IncompatibleError
            When the backend gives no hidden state for the layer, or a score is not finite.
        """
        _check_prompt(prompt)
        tokens: list[TokenScore] = []

        def on_token(step: TokenStep) -> None:
            if step.hidden is None:
                raise IncompatibleError(
                    f"backend {self.backend.name} returned no hidden state for layer {self.layer}:"
                    " it must support generate(hook_layer=...)"
                )
            score = float(self.score_hidden(step.hidden)[0])
            ts = TokenScore(len(tokens), int(step.token_id), step.text, score, score > self.threshold)
            tokens.append(ts)
            if on_score is not None:
                on_score(ts)

        gen = self.backend.generate(
            prompt, max_tokens=max_tokens, temperature=temperature, seed=seed, on_token=on_token, hook_layer=self.layer
        )
        result = self._result(tokens, prompt_text=gen.prompt_text, extra={"n_prompt_tokens": gen.n_prompt_tokens})
        result.generation = gen
        return result

    def score_transcript(self, prompt: TextInput, response: str) -> MonitorResult:
        """Score an existing response to ``prompt`` offline, as if the model had said it.

        A plain-string prompt is continued as plain text (what `generate` does for a
        string); a dialogue prompt gets ``response`` as a new assistant turn.

        Parameters
        ----------
        prompt : str or Dialogue
            What the response answered.
        response : str
            The response text; only its tokens are scored.

        Returns
        -------
        MonitorResult
            Scores of the response tokens.

        Raises
        ------
        InputError
            When the prompt or response is empty.
        """
        _check_prompt(prompt)
        if not response:
            raise InputError("the response to score is empty: give the assistant's text")
        if isinstance(prompt, Dialogue):
            msgs = tuple(Message(m.role, m.content, False) for m in prompt.messages)
            return self.score_dialogue(Dialogue(msgs + (Message("assistant", response, True),)))
        states = self.backend.token_states(prompt + response, [self.layer])
        # a token counts as the response's when it holds any response character
        response_mask = np.array([end > len(prompt) for _, end in states.offsets], dtype=bool)
        return self._from_states(states, response_mask, prompt_text=prompt)

    def score_generation(self, prompt: TextInput, generation: Generation) -> MonitorResult:
        """Re-score a finished generation offline from its exact token ids.

        Why besides `score_transcript`: re-tokenizing text is lossy when the model emitted
        a non-canonical split or partial UTF-8 bytes; the ids are not. Needs a backend
        built on `models.base.BackendBase` (``encode`` and ``token_states_of_ids``).

        Parameters
        ----------
        prompt : str or Dialogue
            The prompt the generation was made from.
        generation : Generation
            The finished generation (e.g. ``result.generation`` from `generate`).

        Returns
        -------
        MonitorResult
            Scores of the generated tokens; they agree with the live scores to float
            tolerance.

        Raises
        ------
        InputError
            When the prompt does not encode to the generation's prompt length, or the
            generation has no tokens.
        IncompatibleError
            When the backend cannot read states of exact token ids.
        """
        _check_prompt(prompt)
        if not (hasattr(self.backend, "encode") and hasattr(self.backend, "token_states_of_ids")):
            raise IncompatibleError(
                f"backend {self.backend.name} cannot read states of exact token ids: use score_transcript"
            )
        prompt_ids = self.backend.encode(prompt, add_generation_prompt=True).ids
        if len(prompt_ids) != generation.n_prompt_tokens:
            raise InputError(
                f"the prompt encodes to {len(prompt_ids)} tokens but the generation had "
                f"{generation.n_prompt_tokens}: pass the prompt the generation was made from"
            )
        if not generation.token_ids:
            raise InputError("the generation has no tokens to score")
        states = self.backend.token_states_of_ids(list(prompt_ids) + list(generation.token_ids), [self.layer])
        mask = np.zeros(len(states.token_ids), dtype=bool)
        mask[len(prompt_ids) :] = True
        return self._from_states(states, mask, prompt_text=generation.prompt_text)

    def score_dialogue(self, dialogue: Dialogue) -> MonitorResult:
        """Score the tokens of a dialogue's ``detect`` messages (e.g. the assistant turns).

        Parameters
        ----------
        dialogue : Dialogue
            A recorded conversation; messages with ``detect=True`` are scored.

        Returns
        -------
        MonitorResult
            Scores of the detect tokens.

        Raises
        ------
        InputError
            When the dialogue is empty or no message has ``detect=True``.
        """
        _check_prompt(dialogue)
        if not any(m.detect for m in dialogue.messages):
            raise InputError("the dialogue has no message with detect=True: mark the assistant turn(s) to score")
        states = self.backend.token_states(dialogue, [self.layer])
        return self._from_states(states, np.asarray(states.detect, dtype=bool))

    def score_many(self, items: Sequence[TextInput], *, progress: bool = False) -> np.ndarray:
        """Per-response aggregate scores for dialogues with detect flags (offline).

        What calibration and evaluation need: one number per recorded response.

        Parameters
        ----------
        items : sequence of Dialogue
            Dialogues with ``detect`` messages.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        numpy.ndarray of shape (len(items),)
            The aggregate score of each dialogue.

        Raises
        ------
        InputError
            When an item is not a Dialogue.
        """
        from liedar.core._util.progress import progress as step_progress

        out = []
        for item in step_progress(items, desc="monitor: scoring", disable=not progress, leave=False):
            if not isinstance(item, Dialogue):
                raise InputError("score_many takes dialogues with detect flags; use score_transcript for text")
            out.append(self.score_dialogue(item).score)
        return np.asarray(out, dtype=np.float64)

    # -- assembly --------------------------------------------------------------------

    def _from_states(self, states: Any, mask: np.ndarray, prompt_text: str = "") -> MonitorResult:
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            raise InputError("no response tokens to score: the response is empty after tokenization")
        scores = self.score_hidden(states.hidden[idx, 0, :])
        tokens = [
            TokenScore(j, int(states.token_ids[i]), states.token_texts[i], float(s), float(s) > self.threshold)
            for j, (i, s) in enumerate(zip(idx, scores))
        ]
        return self._result(tokens, prompt_text=prompt_text)

    def _result(
        self, tokens: list[TokenScore], *, prompt_text: str = "", extra: Optional[dict] = None
    ) -> MonitorResult:
        if not tokens:
            raise InputError("the model generated no tokens: raise max_tokens or check the prompt")
        text = "".join(t.text for t in tokens)
        starts = _token_offsets([t.text for t in tokens])
        sentences: list[SentenceScore] = []
        for a, b in sentence_spans(text):
            members = [t for t, s in zip(tokens, starts) if a <= s < b]
            if not members:
                continue
            score = aggregate_scores([t.score for t in members], self.aggregate)
            sentences.append(
                SentenceScore(text[a:b], a, b, members[0].index, members[-1].index, score, score > self.threshold)
            )
        score = aggregate_scores([t.score for t in tokens], self.aggregate)
        return MonitorResult(
            text=text,
            tokens=tokens,
            sentences=sentences,
            score=score,
            flagged=score > self.threshold,
            aggregate=self.aggregate,
            threshold=self.threshold,
            layer=self.layer,
            prompt_text=prompt_text,
            extra=extra or {},
        )


def _check_prompt(prompt: TextInput) -> None:
    if isinstance(prompt, Dialogue):
        if not prompt.messages or not any(m.content.strip() for m in prompt.messages):
            raise InputError("the prompt dialogue is empty: give at least one message with text")
    elif not isinstance(prompt, str) or not prompt.strip():
        raise InputError("the prompt is empty: give the text the model should respond to")


def _check_metadata(backend: Backend, meta: Any) -> None:
    if meta.model_fingerprint and meta.model_fingerprint != backend.fingerprint:
        raise IncompatibleError(
            f"the probe was trained on {meta.model_name!r} (fingerprint {meta.model_fingerprint[:12]}), "
            f"not on {backend.name} (fingerprint {backend.fingerprint[:12]}): use a probe trained on this model"
        )
    if int(meta.d_model) != int(backend.d_model):
        raise IncompatibleError(
            f"the probe expects width {meta.d_model} but {backend.name} has d_model={backend.d_model}:"
            " use a probe trained on this model"
        )


def _check_finite_probe(probe: Any) -> None:
    """Refuse a probe whose learned numbers are not all finite: it could only score NaN."""
    for name in ("coef_", "intercept_"):
        value = getattr(probe, name, None)
        if value is None:
            continue
        arr = np.asarray(value)
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            raise InputError(
                f"the probe's {name} holds NaN or infinity, so every score would be NaN: retrain the probe"
            )


def _probe_width(probe: Any) -> Optional[int]:
    n = getattr(probe, "n_features_in_", None)
    if n is not None:
        return int(n)
    coef = getattr(probe, "coef_", None)
    return int(np.asarray(coef).shape[-1]) if coef is not None else None


def _linear_weights(probe: Any) -> Optional[tuple[np.ndarray, float]]:
    """(coef, intercept) when the probe documents ``decision_function = X @ coef_ + intercept_``.

    Why: sklearn's input validation costs more than the dot product itself, and it runs
    once per generated token. Only liedar's linear probes promise this form.
    """
    try:
        from liedar.probes.estimators import PROBE_TYPES
    except ImportError:
        return None
    if not isinstance(probe, tuple(PROBE_TYPES)):
        return None
    coef = np.asarray(getattr(probe, "coef_", None), dtype=np.float64)
    if coef.ndim != 1:
        return None
    return coef, float(np.asarray(probe.intercept_).reshape(-1)[0])
