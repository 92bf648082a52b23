"""The one chat renderer both backends use, and llama.cpp's byte/char offset helpers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from liedar.core.errors import IncompatibleError, InputError
from liedar.models.chat import Dialogue, Message, render
from liedar.models.llamacpp import _align, _byte_to_char

CHATML = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
TRIMMING = "{{ bos_token }}{% for m in messages %}<turn>{{ m['role'] }}\n{{ m['content'] | trim }}<end>\n{% endfor %}"
DLG = Dialogue.of(Message("user", "Is Rome in Italy?"), Message("assistant", "Yes.", detect=True))


def test_plain_string_is_untouched_and_fully_detect():
    r = render("Paris is in France.", CHATML)
    assert (r.text, r.detect_spans, r.templated) == ("Paris is in France.", ((0, 19),), False)


def test_dialogue_spans_point_at_message_contents_and_prefill_stops_there():
    r = render(DLG, CHATML)
    assert [r.text[a:b] for a, b in r.spans] == ["Is Rome in Italy?", "Yes."]
    assert r.text.endswith("Yes.") and r.detect_spans == (r.spans[1],)
    q = render(Dialogue.of(Message("user", "Hi")), CHATML, add_generation_prompt=True)
    assert q.text.endswith("<|im_start|>assistant\n")


def test_trimming_template_and_bos_and_no_template_fallback():
    r = render(Dialogue.of(Message("user", "  padded  ", detect=True)), TRIMMING, bos_token="<bos>")
    assert r.text.startswith("<bos><turn>user") and r.text[slice(*r.spans[0])] == "padded"
    plain = render(DLG, None)
    assert plain.text == "user: Is Rome in Italy?\n\nassistant: Yes." and plain.templated is False


def test_bad_dialogues_are_one_line_errors():
    with pytest.raises(InputError):
        render(Dialogue.of(), CHATML)
    rewriting = "{% for m in messages %}{{ m['content'] | upper }}{% endfor %}"
    with pytest.raises(IncompatibleError, match="cannot be located"):
        render(DLG, rewriting)
    rejecting = "{{ raise_exception('roles must alternate') }}"
    with pytest.raises(InputError, match="roles must alternate"):
        render(DLG, rejecting)


@given(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=8))
def test_align_and_byte_to_char_map_pieces_back_to_characters(pieces):
    text = "".join(pieces)
    data = text.encode()
    spans = _align(data, [p.encode() for p in pieces])
    table = _byte_to_char(text)
    assert [text[table[a] : table[b]] for a, b in spans] == pieces


def test_align_tolerates_a_sentencepiece_leading_space():
    assert _align(b"Hello world", [b" Hello", b" world"]) == [(0, 5), (5, 11)]
