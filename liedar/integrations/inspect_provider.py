"""liedar as an inspect_ai model provider: ``inspect eval TASK --model liedar/smollm2-135m``.

Registered through the ``inspect_ai`` entry-point group (pyproject.toml points it at
`liedar.integrations.inspect_registry`, which holds the ``@modelapi(name="liedar")``
factory), so inspect finds it without liedar being imported first.

Model args (``-M key=value``):

* ``probe=PATH.npz``: a probe saved by ``liedar probe train``; the honesty monitor then scores
  every generated token at the probe's layer (the probe must be for this model: checked);
* ``backend=llamacpp|transformers`` (default llamacpp), ``threads=N`` (default 1);
* ``aggregate=mean|max|last``, ``threshold=X`` (default: the probe's calibrated threshold).

Each `ModelOutput.metadata["liedar"]` holds plain JSON (inspect's log writer cannot store
tensors): ``token_scores`` (list of floats), ``tokens`` (list of str), ``score`` (the
per-response aggregate), ``flagged`` (bool), ``threshold``, ``layer``, ``aggregate``, ``probe``
(file name). With ``logprobs`` asked in the generate config (``--logprobs``), each choice
carries the generated tokens' log-probabilities (``top_logprobs`` is not computed: the backend
re-scores only the tokens it produced).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Optional

from liedar.core.errors import InputError


def _message_text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for c in content:
        text = getattr(c, "text", None)
        if text is None:
            raise InputError(f"liedar models read text only; a {type(c).__name__} content part cannot be sent")
        parts.append(text)
    return "".join(parts)


def to_dialogue(messages: Any) -> Any:
    """inspect chat messages -> a liedar `Dialogue` (system/user/assistant; tool turns refused)."""
    from liedar.models.chat import Dialogue, Message

    rows = []
    for m in messages:
        role = m.role
        if role not in ("system", "user", "assistant"):
            raise InputError(
                f"liedar models take system/user/assistant turns; got a {role!r} message (tools unsupported)"
            )
        rows.append(Message(role, _message_text(m), detect=(role == "assistant")))
    return Dialogue(tuple(rows))  # a trailing assistant message is a prefill: the model continues it


def _read_model_args(model_args: dict[str, Any]) -> tuple[str, int, Any, str, Any]:
    """(backend, threads, probe, aggregate, threshold) from the ``-M`` model args; any other
    key is refused."""
    backend = str(model_args.pop("backend", "llamacpp"))
    threads = int(model_args.pop("threads", 1))
    probe = model_args.pop("probe", None)
    aggregate = str(model_args.pop("aggregate", "mean"))
    threshold = model_args.pop("threshold", None)
    if model_args:
        raise InputError(
            f"unknown liedar model args {sorted(model_args)}: use probe, backend, threads, aggregate, threshold"
        )
    return backend, threads, probe, aggregate, threshold


def _load_monitor(lm: Any, probe: Any, aggregate: str, threshold: Any) -> tuple[Any, Optional[str]]:
    """(honesty monitor, probe file name) for ``probe``; (None, None) when no probe is given."""
    if not probe:
        return None, None
    from liedar.probes.monitor import HonestyMonitor

    path = Path(str(probe)).expanduser()
    monitor = HonestyMonitor.from_file(
        lm, path, aggregate=aggregate, threshold=None if threshold is None else float(threshold)
    )
    return monitor, path.name


def _monitor_metadata(r: Any, probe_name: Optional[str]) -> dict[str, Any]:
    """A monitored generation's scores as plain JSON (inspect's log writer cannot store tensors)."""
    return {
        "token_scores": [float(t.score) for t in r.tokens],
        "tokens": [str(t.text) for t in r.tokens],
        "token_flagged": [bool(t.flagged) for t in r.tokens],
        "score": float(r.score),
        "flagged": bool(r.flagged),
        "threshold": float(r.threshold),
        "layer": int(r.layer),
        "aggregate": str(r.aggregate),
        "probe": probe_name,
    }


def _token_logprobs(lm: Any, g: Any) -> Any:
    """log p of each generated token given the rendered prompt and the tokens before it."""
    from inspect_ai.model import Logprob, Logprobs

    enc_ids, _ = lm.tokenize(g.prompt_text, True)
    lp = lm.token_logprobs_of_ids([list(enc_ids) + list(g.token_ids)])[0][len(enc_ids) - 1 :]
    return Logprobs(content=[Logprob(token=lm.token_text(t), logprob=float(x)) for t, x in zip(g.token_ids, lp)])


def make_api_class() -> type:
    """Build the ModelAPI subclass (inside a function: inspect_ai is imported only when used)."""
    from liedar.core._util.extras import require

    require("inspect_ai", "the inspect_ai model provider")
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        GenerateConfig,
        ModelAPI,
        ModelOutput,
        ModelUsage,
    )

    class LiedarModelAPI(ModelAPI):
        """A local liedar backend (optionally monitored) behind inspect's ModelAPI."""

        def __init__(
            self,
            model_name: str,
            base_url: Optional[str] = None,
            api_key: Optional[str] = None,
            config: Optional[GenerateConfig] = None,
            **model_args: Any,
        ) -> None:
            super().__init__(
                model_name=model_name, base_url=base_url, api_key=api_key, config=config or GenerateConfig()
            )
            from liedar import models

            backend, threads, probe, aggregate, threshold = _read_model_args(model_args)
            self.lm = models.load(model_name, backend=backend, n_threads=threads)
            self.monitor, self.probe_name = _load_monitor(self.lm, probe, aggregate, threshold)
            self._lock = threading.Lock()  # one model, one decode at a time

        def max_connections(self) -> int:
            return 1

        def _generate_sync(self, dialogue: Any, config: GenerateConfig) -> tuple[str, dict[str, Any], int, int, Any]:
            max_tokens = int(config.max_tokens or 64)
            temperature = float(config.temperature or 0.0)
            seed = int(config.seed or 0)
            with self._lock:
                if self.monitor is None:
                    g = self.lm.generate(dialogue, max_tokens=max_tokens, temperature=temperature, seed=seed)
                    meta: dict[str, Any] = {}
                else:
                    r = self.monitor.generate(dialogue, max_tokens=max_tokens, temperature=temperature, seed=seed)
                    g = r.generation
                    meta = _monitor_metadata(r, self.probe_name)
                lps = _token_logprobs(self.lm, g) if config.logprobs and g.token_ids else None
            return g.text, meta, int(g.n_prompt_tokens), len(g.token_ids), lps

        async def generate(self, input: list[Any], tools: list[Any], tool_choice: Any, config: GenerateConfig) -> Any:
            if tools:
                raise InputError("liedar models do not call tools; run a task without tools")
            dialogue = to_dialogue(input)
            text, meta, n_in, n_out, lps = await asyncio.to_thread(self._generate_sync, dialogue, config)
            choice = ChatCompletionChoice(
                message=ChatMessageAssistant(content=text, model=self.model_name, source="generate"),
                stop_reason="stop" if n_out < int(config.max_tokens or 64) else "max_tokens",
                logprobs=lps,
            )
            return ModelOutput(
                model=self.model_name,
                choices=[choice],
                usage=ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out),
                metadata={"liedar": meta} if meta else None,
            )

    return LiedarModelAPI
