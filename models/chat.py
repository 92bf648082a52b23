"""One input type for plain text and chat.

`Message.detect` marks the messages whose tokens a probe should read (Apollo-style
"detect" masks): when a dialogue is pooled, only tokens inside detect messages count.
A plain string is treated as a single message with detect=True and no chat template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence, Union


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str
    detect: bool = False


@dataclass(frozen=True)
class Dialogue:
    messages: tuple[Message, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, *messages: Message) -> "Dialogue":
        return cls(tuple(messages))

    def to_dict(self) -> list[dict]:
        return [{"role": m.role, "content": m.content, "detect": m.detect} for m in self.messages]

    @classmethod
    def from_dict(cls, rows: Sequence[dict]) -> "Dialogue":
        return cls(tuple(Message(r["role"], r["content"], bool(r.get("detect", False))) for r in rows))


TextInput = Union[str, Dialogue]
