"""One input type for plain text and chat.

`Message.detect` marks the messages whose tokens a probe should read (Apollo-style
"detect" masks): when a dialogue is pooled, only tokens inside detect messages count.
A plain string is treated as a single message with detect=True and no chat template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence, Union

ROLES = ("system", "user", "assistant")  # a Message's roles; a plain-layout reply ends at any of them


@dataclass(frozen=True)
class Message:
    role: str  # one of ROLES
    content: str
    detect: bool = False


@dataclass(frozen=True)
class Dialogue:
    messages: tuple[Message, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, *messages: Message) -> "Dialogue":
        return cls(tuple(messages))

    # stays hand-written: its JSON is a list of messages, not an object
    def to_dict(self) -> list[dict]:
        return [{"role": m.role, "content": m.content, "detect": m.detect} for m in self.messages]

    @classmethod
    def from_dict(cls, rows: Sequence[dict]) -> "Dialogue":
        return cls(tuple(Message(r["role"], r["content"], bool(r.get("detect", False))) for r in rows))


TextInput = Union[str, Dialogue]


# --- rendering: one renderer for every backend ----------------------------------------------
#
# Why our own renderer: the transformers and llama.cpp backends must turn a dialogue into the
# *same* text, or their hidden states are not comparable. Both hand us the model's chat
# template string (tokenizer_config / GGUF metadata); we render it with one sandboxed jinja2
# environment configured like Hugging Face's (trim_blocks, lstrip_blocks).


@dataclass(frozen=True)
class Rendered:
    """A model-ready text and where each message's content landed in it."""

    text: str
    spans: tuple[tuple[int, int], ...]  # character range of each message's content in `text`
    detect: tuple[bool, ...]  # the detect flag of each message (one per span)
    templated: bool  # the text came from a chat template (it carries its own special tokens)
    turn_marks: tuple[str, ...] = ()  # a reply to this text ends where one of these begins (`reply_end`)

    @property
    def detect_spans(self) -> tuple[tuple[int, int], ...]:
        return tuple(s for s, d in zip(self.spans, self.detect) if d)


def render(
    inp: "TextInput",
    template: "str | None",
    *,
    bos_token: str = "",
    eos_token: str = "",
    add_generation_prompt: bool = False,
) -> Rendered:
    """Render a plain string (unchanged, fully detect) or a dialogue with `template`.

    A dialogue that ends with an assistant message is rendered as a *prefill*: the text
    stops right after that message's content, so a continuation extends the assistant's
    words (this is what score_options and generate need). Models without a chat template
    get a plain ``role: content`` layout.
    """
    from liedar.core.errors import InputError

    if isinstance(inp, str):
        return Rendered(inp, ((0, len(inp)),), (True,), False)
    if not isinstance(inp, Dialogue):
        raise InputError(
            f"inputs must be str or Dialogue, got {type(inp).__name__}; wrap chats in models.chat.Dialogue"
        )
    if not inp.messages:
        raise InputError("a Dialogue has no messages; give it at least one Message")
    prefill = inp.messages[-1].role == "assistant"
    rows = [{"role": m.role, "content": m.content} for m in inp.messages]
    if template:
        text = _compile(template).render(
            messages=rows,
            bos_token=bos_token,
            eos_token=eos_token,
            add_generation_prompt=add_generation_prompt and not prefill,
        )
    else:
        text = "".join(f"{m.role}: {m.content}\n\n" for m in inp.messages)
        if add_generation_prompt and not prefill:
            text += "assistant:"
    spans = _locate(text, [m.content for m in inp.messages])
    if prefill:
        text = text[: spans[-1][1]]
    roles = dict.fromkeys(ROLES + tuple(m.role for m in inp.messages))
    marks = () if template else tuple(f"\n{role}:" for role in roles)
    return Rendered(text, tuple(spans), tuple(m.detect for m in inp.messages), bool(template), marks)


def reply_end(text: str, marks: Sequence[str]) -> "int | None":
    """Where a reply in the plain ``role: content`` layout ends: the line break(s) before the
    first line at which the model begins another turn (``marks``, `Rendered.turn_marks`), or None.

    Why: a model without a chat template has no end-of-turn token; it goes on writing the
    user's next message and its own next answer in the layout it was shown. Those lines are
    not its reply (an ``Answer: X`` in a turn it wrote for the user is not its answer), and
    decoding them is most of a long reply's cost (gemma3-270m, chain-of-thought menus: half
    the replies begin a new turn, on average 15% of the way into the 160-token budget).
    `generate` and every sampling path stop at the token that completes a mark and keep the
    tokens before it; a chat template's end-of-turn token ends a templated reply instead.
    """
    found = [at for at in (text.find(mark) for mark in marks) if at >= 0]
    if not found:
        return None
    at = min(found)
    while at > 0 and text[at - 1] == "\n":  # the blank lines that separate turns are not the reply's
        at -= 1
    return at


def reply_text(text: str, marks: Sequence[str]) -> str:
    """``text`` up to where the model began another turn (`reply_end`), else all of it."""
    at = reply_end(text, marks)
    return text if at is None else text[:at]


def _locate(text: str, contents: Sequence[str]) -> list[tuple[int, int]]:
    """Find each message's content in the rendered text, in order (templates may trim it)."""
    from liedar.core.errors import IncompatibleError

    spans, cursor = [], 0
    for content in contents:
        for candidate in (content, content.strip()):
            at = text.find(candidate, cursor)
            if at >= 0:
                spans.append((at, at + len(candidate)))
                cursor = at + len(candidate)
                break
        else:
            raise IncompatibleError(
                f"the chat template rewrote the message {content[:40]!r} so its tokens cannot be located; "
                "pass a plain string instead of a Dialogue for this model"
            )
    return spans


_TEMPLATES: dict[str, object] = {}


def _compile(template: str):
    if template not in _TEMPLATES:
        from datetime import datetime

        from jinja2.sandbox import ImmutableSandboxedEnvironment

        def raise_exception(message: str):
            from liedar.core.errors import InputError

            raise InputError(f"the model's chat template rejected this dialogue: {message}")

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        _TEMPLATES[template] = env.from_string(template)
    return _TEMPLATES[template]
