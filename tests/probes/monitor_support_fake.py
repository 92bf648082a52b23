"""A deterministic stand-in for a model backend, for monitor unit tests.

Tokens are words with their leading whitespace; the hidden state at a position is a
causal function of the tokens up to it (a running mean of per-token vectors, scaled by
layer), so streaming and offline paths must agree exactly, like a real causal model.
"""

from __future__ import annotations

import re
import zlib
from typing import Callable, Optional, Sequence

import numpy as np

from liedar.core.errors import InputError
from liedar.models.backend import Generation, TokenStates, TokenStep
from liedar.models.chat import TextInput

_TOKEN = re.compile(r"\s*\S+|\s+$")


class FakeBackend:
    kind = "fake"

    def __init__(self, d_model: int = 8, n_layers: int = 3, n_ctx: int = 64, continuation: str = "") -> None:
        self.name = "fake-model"
        self.fingerprint = "f" * 64
        self.d_model = d_model
        self.n_layers = n_layers
        self.n_ctx = n_ctx
        self.continuation = continuation or " The car is fine. It never crashed!\nTrust me, honestly."
        self.generate_calls: list[dict] = []

    # -- helpers -------------------------------------------------------------------------
    def _embed(self, token: str) -> np.ndarray:
        return np.random.default_rng(zlib.crc32(token.encode())).normal(size=self.d_model)

    def _states(self, tokens: Sequence[str], layer: int) -> np.ndarray:
        emb = np.stack([self._embed(t) for t in tokens])
        return (np.cumsum(emb, axis=0) / np.arange(1, len(tokens) + 1)[:, None] * (layer + 1)).astype(np.float32)

    def render(self, text: TextInput) -> tuple[str, list[tuple[int, int]]]:
        """Rendered text and the character ranges of detect messages."""
        if isinstance(text, str):
            return text, [(0, len(text))]
        out, spans = "", []
        for m in text.messages:
            out += f"<{m.role}>"
            if m.detect:
                spans.append((len(out), len(out) + len(m.content)))
            out += m.content + " </s>"
        return out, spans

    def _check_layer(self, layer: int) -> None:
        if not 0 <= layer <= self.n_layers + 1:
            raise InputError(f"layer {layer} out of range")

    # -- Backend protocol ------------------------------------------------------------------
    def token_states(self, text: TextInput, layers: Sequence[int]) -> TokenStates:
        rendered, spans = self.render(text)
        tokens = _TOKEN.findall(rendered)
        offsets, pos = [], 0
        for t in tokens:
            offsets.append((pos, pos + len(t)))
            pos += len(t)
        for layer in layers:
            self._check_layer(layer)
        hidden = np.stack([self._states(tokens, layer) for layer in layers], axis=1)
        detect = np.array([any(a <= s < b for a, b in spans) for s, _ in offsets], dtype=bool)
        ids = [zlib.crc32(t.encode()) % 1000 for t in tokens]
        return TokenStates(hidden, ids, list(tokens), offsets, detect, rendered)

    def generate(
        self,
        prompt: TextInput,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        on_token: Optional[Callable[[TokenStep], None]] = None,
        hook_layer: Optional[int] = None,
    ) -> Generation:
        self.generate_calls.append({"hook_layer": hook_layer, "seed": seed, "max_tokens": max_tokens})
        rendered = self.render(prompt)[0] if isinstance(prompt, str) else self.render(prompt)[0] + "<assistant>"
        prompt_tokens = _TOKEN.findall(rendered)
        if len(prompt_tokens) > self.n_ctx:
            raise InputError(f"prompt is {len(prompt_tokens)} tokens, longer than the context ({self.n_ctx})")
        new = _TOKEN.findall(self.continuation)[:max_tokens]
        if hook_layer is not None:
            self._check_layer(hook_layer)
            states = self._states(prompt_tokens + new, hook_layer)
        for i, tok in enumerate(new):
            hidden = states[len(prompt_tokens) + i] if hook_layer is not None else None
            if on_token is not None:
                on_token(TokenStep(i, zlib.crc32(tok.encode()) % 1000, tok, hidden))
        return Generation(rendered, "".join(new), [zlib.crc32(t.encode()) % 1000 for t in new], len(prompt_tokens))
