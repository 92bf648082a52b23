"""The one interface every model backend implements.

Layer numbering (the same for every backend, documented once, pinned by tests):

* ``0``             the token embeddings as the first block sees them (after any
                    embedding scale, e.g. Gemma's sqrt(d_model));
* ``i`` (1..n)      the residual stream output of transformer block ``i``;
* ``n_layers + 1``  the output of the final norm (what the unembedding reads).

Note that Hugging Face's ``output_hidden_states`` tuple is *not* this list: its last
entry is the final norm applied to block n, so block n's raw output is missing there.
Backends capture block outputs with hooks (transformers) or the eval callback
(llama.cpp, tensor ``l_out-{i-1}``) to honour this numbering.

Position:

* ``"last"``  the last token of the input (of the last detect message for dialogues);
* ``"mean"``  mean over tokens (over detect-message tokens for dialogues);
* ``Span(start, end)``  mean over tokens overlapping the character range [start, end)
  of the *input text* (plain strings only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Optional, Protocol, Sequence, Union, runtime_checkable

import numpy as np

from liedar.models.chat import Rendered, TextInput


@dataclass(frozen=True)
class Span:
    """A character range [start, end) of a plain-text input."""

    start: int
    end: int


Position = Union[Literal["last", "mean"], Span]


@dataclass
class TokenStep:
    """One generated token, handed to ``generate(on_token=...)``.

    ``hidden`` is the hidden state *at this token's position* at ``hook_layer`` (the
    same vector the offline path would compute for the finished transcript), or None
    when no layer was requested.
    """

    index: int
    token_id: int
    text: str
    hidden: Optional[np.ndarray] = None


@dataclass
class Generation:
    prompt_text: str  # the rendered prompt (after the chat template)
    text: str  # the generated continuation only
    token_ids: list[int]
    n_prompt_tokens: int


@dataclass
class TokenStates:
    """Per-token hidden states of one input, for auditing transcripts token by token."""

    hidden: np.ndarray  # float32 [n_tokens, n_requested_layers, d_model]
    token_ids: list[int]
    token_texts: list[str]
    offsets: list[tuple[int, int]]  # character offsets into `text`
    detect: np.ndarray  # bool [n_tokens]: token lies inside a detect message (all True for plain text)
    text: str  # the rendered text


@dataclass
class Encoded:
    """One input after rendering and tokenization."""

    rendered: Rendered
    ids: list[int]
    offsets: list[tuple[int, int]]  # character offsets into rendered.text
    detect: np.ndarray  # bool [n_tokens]


@runtime_checkable
class Backend(Protocol):
    """What instruments, organisms, the monitor and the integrations may ask of a model.

    Every member is public so no caller reaches into a backend's private primitives. A
    backend that cannot give a member (a served model has no token ids) still has it and
    raises one clear line naming what to run instead, so ``isinstance(x, Backend)`` holds
    for every backend and the refusal reads the same everywhere.
    """

    name: str
    kind: str  # "transformers" | "llamacpp"
    fingerprint: str  # content hash of the weights' source file: same model => same fingerprint
    n_layers: int  # number of transformer blocks; valid layers are 0..n_layers+1
    d_model: int
    n_ctx: int

    @property
    def chat_template(self) -> Optional[str]: ...

    @property
    def bos_token(self) -> str: ...

    @property
    def eos_token(self) -> str: ...

    def check_layers(self, layers: Sequence[int]) -> list[int]: ...

    def tokenize(self, text: str, templated: bool = False) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and character offsets of already rendered text (see ``BackendBase``)."""

    def encode(self, inp: TextInput, *, add_generation_prompt: bool = False) -> Encoded: ...

    def token_text(self, token: int) -> str:
        """The text of one token id, special tokens spelled out."""

    def token_logprobs_of_ids(self, batch: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """For each id sequence, ``log p(ids[t] | ids[:t])`` for t = 1..len-1."""

    def hidden_states(
        self,
        inputs: Sequence[TextInput],
        layers: Sequence[int],
        position: Position = "last",
        *,
        progress: bool = False,
    ) -> np.ndarray:
        """float32 ``[n_inputs, len(layers), d_model]``."""

    def token_states(self, text: TextInput, layers: Sequence[int]) -> TokenStates: ...

    def token_states_of_ids(
        self, ids: Sequence[int], layers: Sequence[int], enc: Optional[Encoded] = None
    ) -> TokenStates: ...

    def score_options(self, prompt: TextInput, options: Sequence[str]) -> np.ndarray:
        """Summed log-probability of each option as a continuation of the prompt."""

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
        """With ``stop_at_end=False`` exactly ``max_tokens`` steps run (an end token is
        emitted and decoding goes on), so timings compare equal work across models."""
