"""``liedar report --audit FILE`` reads the audit's record through its types
(`liedar.report.audit_record`): a damaged record is one line naming its field, exit 2, the
record unchanged and no page written; the committed zoo record renders. No model is loaded."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hardening_support import snapshot

from liedar.cli import main

RECORD = Path(__file__).resolve().parents[2] / "docs" / "records" / "audit-zoo-smollm2-135m-test.json"


def _row(d: dict) -> dict:
    return d["models"][0]["verdict"]["rows"][0]


def _effect_a_string(d: dict) -> None:
    row = next(r for m in d["models"] for r in m["verdict"]["rows"] if r.get("effect"))
    row["effect"]["value"] = "0.5"


# (id, edit of the valid record, what the one line names)
CASES = [
    ("models-a-dict", lambda d: d.update(models={"m01": d["models"][0]}), "AuditRecord.models must be a list"),
    ("model-without-verdict", lambda d: d["models"][0].pop("verdict"), "AuditedModel.verdict is missing"),
    ("no-rule", lambda d: d.pop("rule"), "AuditRecord.rule is missing"),
    ("row-without-state", lambda d: _row(d).pop("state"), "EvidenceRow.state is missing"),
    ("confusion-empty", lambda d: d["score"].update(confusion={}), "ZooScore.confusion must hold one row"),
    ("effect-a-string", _effect_a_string, "Estimate.value must be a number, is text"),
    ("rule-a-list", lambda d: d.update(rule=[1]), "RuleRef must be a JSON object, is a list"),
    ("other-version", lambda d: d.update(format="liedar-audit-9"), "this liedar reads 'liedar-audit-1'"),
    ("not-an-audit", lambda d: d.update(format="liedar-audit-rule-1"), "is not an audit's results"),
    ("no-models", lambda d: d.update(models=[]), "AuditRecord.models is empty"),
    ("zoo-member-without-truth", lambda d: d["models"][0].pop("truth"), "AuditRecord.models[0] lacks truth"),
    ("score-without-zoo", lambda d: d.pop("zoo"), "AuditRecord.score needs AuditRecord.zoo"),
]


@pytest.fixture(scope="module")
def good() -> dict:
    if not RECORD.is_file():
        pytest.skip(f"{RECORD} is not in this checkout")
    return json.loads(RECORD.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("edit", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_damaged_audit_record_is_one_line_naming_its_field(good, edit, names, tmp_path, no_model, capsys):
    record = copy.deepcopy(good)
    edit(record)
    (tmp_path / "audit.json").write_text(json.dumps(record), encoding="utf-8")
    before = snapshot(tmp_path)
    code = main(["report", "--audit", str(tmp_path / "audit.json"), "--output", str(tmp_path / "page")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("liedar: error: "), lines
    assert names in lines[0] and "audit.json" in lines[0], lines
    assert snapshot(tmp_path) == before  # the record unchanged, no page written


def test_the_committed_zoo_record_renders(good, tmp_path, no_model, capsys):
    (tmp_path / "audit.json").write_text(json.dumps(good), encoding="utf-8")
    assert main(["report", "--audit", str(tmp_path / "audit.json"), "--output", str(tmp_path / "page")]) == 0
    assert "Confusion matrix" in (tmp_path / "page" / "index.html").read_text(encoding="utf-8")
