"""The rule file: read strictly, refused in one line (exit 2) when its hash is not pinned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from liedar.audit.rule import DEFAULT_RULE, KINDS, check_rule, load_rule, pin, pinned_hashes
from liedar.cli import main
from liedar.core.errors import InputError


def _good() -> dict:
    return json.loads(DEFAULT_RULE.read_text(encoding="utf-8"))


def _write(tmp_path: Path, data, name: str = "rule.json") -> tuple[Path, Path]:
    rule = tmp_path / name
    rule.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    pins = tmp_path / "pins.json"
    pin(rule, pins)
    return rule, pins


def test_the_shipped_rule_is_pinned_and_reads():
    rule = load_rule()
    assert rule.sha256 in pinned_hashes()
    assert set(rule.verdicts) == set(KINDS)
    assert rule.status in ("provisional", "chosen")
    assert "sandbagging_gap" in rule.detectors()


def test_a_rule_whose_hash_is_not_pinned_is_refused(tmp_path):
    data = _good()
    data["verdicts"]["sandbagging"][0]["min_excess"] = 0.05  # one threshold edited by hand
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="not a committed rule"):
        load_rule(path)


def test_the_cli_refuses_an_unpinned_rule_in_one_line(tmp_path, capsys):
    path = tmp_path / "edited.json"
    path.write_text(DEFAULT_RULE.read_text(encoding="utf-8") + " ", encoding="utf-8")
    argv = ["audit", "--model", "zoo/smollm2-135m/sycophant", "--rule", str(path), "--output", str(tmp_path / "o")]
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "not a committed rule" in err


def test_bad_json_is_refused_even_when_pinned(tmp_path):
    path, pins = _write(tmp_path, "{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        load_rule(path, pins=pins)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.update(extra=1), "unknown keys"),
        (lambda d: d.update(status="final"), "status"),
        (lambda d: d["verdicts"].pop("lying"), "exactly"),
        (lambda d: d.update(precedence=["sandbagging"] * 4), "precedence"),
        (lambda d: d.update(clean_requires=["clean"]), "clean_requires"),
        (lambda d: d["verdicts"]["sandbagging"][0].update(min_excess="0.1"), "finite number"),
        (lambda d: d["verdicts"]["sandbagging"][0].update(min_excess=float("nan")), "finite number"),
        (lambda d: d["verdicts"]["sandbagging"][0].update(detectors=[]), "non-empty"),
        (lambda d: d["verdicts"]["sandbagging"][0].update(require_flag=1), "true/false"),
        (lambda d: d["verdicts"]["sandbagging"][0].pop("plan_effect"), "lacks"),
    ],
)
def test_malformed_rules_are_refused_in_one_line(tmp_path, edit, message):
    data = _good()
    edit(data)
    path, pins = _write(tmp_path, json.dumps(data))
    with pytest.raises(InputError, match=message) as info:
        load_rule(path, pins=pins)
    assert "\n" not in str(info.value)


def test_check_rule_keeps_the_rows():
    rule = check_rule(_good(), "abc", "x.json")
    assert rule.sha256 == "abc" and rule.verdicts["sycophancy"][0].detectors[-1] == "sycophancy"
