"""The loaders accept what they should (UTF-8 with a byte-order mark, CRLF line ends) and
name ``file:line`` and the expected shape in what they refuse."""

from __future__ import annotations

import json

import pytest

from liedar.core.errors import InputError

BOM = b"\xef\xbb\xbf"


def test_statement_csv_with_bom_and_crlf(tmp_path):
    from liedar.probes.datasets import load_csv

    f = tmp_path / "s.csv"
    f.write_bytes(BOM + b"statement,label\r\nParis is in France.,1\r\nParis is in Peru.,0\r\n")
    s = load_csv(f)
    assert list(s.inputs) == ["Paris is in France.", "Paris is in Peru."] and s.labels.tolist() == [1, 0]


@pytest.mark.parametrize(
    ("loader", "text"),
    [
        ("statements", '{"statement": "A.", "label": 1}\r\n'),
        ("transcripts", '{"prompt": "Q", "response": "A", "label": "honest"}\n'),
        ("episodes", '{"episode_id": 1, "scenario": "trading-report", "action": "report-tip"}\n'),
        ("labels", '{"id": 7, "label": "honest"}\n'),
    ],
)
def test_jsonl_loaders_accept_a_bom(loader, text, tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_bytes(BOM + text.encode())
    assert len(_load(loader, f)) == 1


def _load(loader, path):
    if loader == "statements":
        from liedar.probes.datasets import load_jsonl

        return load_jsonl(path)
    if loader == "transcripts":
        from liedar.probes.monitor_calibration import load_transcripts

        return load_transcripts(path)
    if loader == "episodes":
        from liedar.behavioral.episodes import load_episodes

        return load_episodes(path)
    from liedar.behavioral.judges import load_labels

    return load_labels(path)


@pytest.mark.parametrize(
    ("loader", "lines", "line", "needle"),
    [
        ("statements", [{"statement": "A.", "label": 1}, {"dialogue": "hi", "label": 0}], 2, "'dialogue' must be"),
        ("transcripts", [{"prompt": "Q", "response": "A"}, {"dialogue": [{"content": "x"}]}], 2, "'role' is missing"),
        ("episodes", [{"episode_id": "a", "scenario": "s", "action": None}], 1, '"episode_id": "ep-1"'),
        ("labels", [{"id": "a", "label": "x"}, {"id": "b", "label": None}], 2, '{"id": "item-1", "label"'),
        ("labels", [{"id": "a", "label": "x"}, {"id": "a", "label": "y"}], 2, "appears twice"),
    ],
)
def test_refusals_name_file_line_and_shape(loader, lines, line, needle, tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(InputError) as info:
        _load(loader, f)
    message = str(info.value)
    assert f"{f}:{line}:" in message and needle in message and "\n" not in message


def test_not_utf8_names_the_line(tmp_path):
    from liedar.core._util.jsonl import iter_jsonl

    f = tmp_path / "x.jsonl"
    f.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(InputError, match=r"x\.jsonl:2: not UTF-8"):
        list(iter_jsonl(f))


def test_a_line_separator_inside_a_string_keeps_line_numbers(tmp_path):
    from liedar.core._util.jsonl import iter_jsonl

    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps({"t": "a\u2028b"}, ensure_ascii=False) + "\n{bad\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"x\.jsonl:2: not valid JSON"):
        list(iter_jsonl(f))


def test_judge_csv_with_bom(tmp_path):
    from liedar.behavioral.judges import load_labels

    f = tmp_path / "h.csv"
    f.write_bytes(BOM + b"id,label\na,honest\nb, deceptive \n")
    assert load_labels(f) == {"a": "honest", "b": "deceptive"}
