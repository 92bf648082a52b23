from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from liedar.behavioral.judges import load_labels, validate_judge
from liedar.core.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from cli_harness import run_cli  # noqa: E402


def _write(path, labels: dict[str, str]):
    path.write_text("".join(json.dumps({"id": i, "label": lab}) + "\n" for i, lab in labels.items()))
    return path


def test_good_grader_is_trusted():
    rng = np.random.default_rng(0)
    human = {f"i{k}": str(rng.choice(["honest", "deceptive"])) for k in range(200)}
    grader = dict(human)
    for k in list(human)[:10]:  # 5% disagreement
        grader[k] = "honest" if human[k] == "deceptive" else "deceptive"
    r = validate_judge(grader, human)
    assert r.agreement.value == pytest.approx(0.95) and r.kappa.value > 0.85 and r.trusted
    assert r.kappa.kind == "quality"


def test_grader_that_always_says_honest_is_too_noisy():
    human = {f"i{k}": ("deceptive" if k < 10 else "honest") for k in range(100)}
    grader = {k: "honest" for k in human}
    r = validate_judge(grader, human)
    assert r.agreement.value == pytest.approx(0.9)  # high raw agreement...
    assert r.kappa.value == pytest.approx(0.0) and not r.trusted  # ...but no better than chance
    assert "too noisy" in r.reading


def test_mismatched_ids_and_labels(tmp_path):
    with pytest.raises(InputError, match="do not pair: 1 id\\(s\\) only in the grader file"):
        validate_judge({"a": "x", "b": "x"}, {"a": "x"})
    with pytest.raises(InputError, match="grader label"):
        validate_judge({"a": "maybe"}, {"a": "honest"}, allowed=["honest", "deceptive"])
    p = _write(tmp_path / "dup.jsonl", {"a": "x"})
    p.write_text(p.read_text() * 2)
    with pytest.raises(InputError, match="appears twice"):
        load_labels(p)
    c = tmp_path / "l.csv"
    c.write_text("item,label\na,x\n")
    with pytest.raises(InputError, match="'id' and 'label'"):
        load_labels(c)


def test_csv_and_cli(tmp_path, capsys):
    human = {f"i{k}": ("deceptive" if k % 3 == 0 else "honest") for k in range(60)}
    grader = {k: ("honest" if k in ("i0", "i3", "i6", "i9") else v) for k, v in human.items()}
    c = tmp_path / "g.csv"
    c.write_text("id,label\n" + "".join(f"{k},{v}\n" for k, v in grader.items()))
    h = _write(tmp_path / "h.jsonl", human)
    assert load_labels(c) == grader
    assert run_cli(["judge", "--judge", str(c), "--human", str(h)]) == 0
    out = capsys.readouterr().out
    assert "kappa" in out and "n=60" in out
    bad = _write(tmp_path / "other.jsonl", {"zz": "honest"})
    assert run_cli(["judge", "--judge", str(bad), "--human", str(h)]) == 2
    assert "do not pair" in capsys.readouterr().err
