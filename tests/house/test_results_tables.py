"""README's headline numbers, docs/results.md and docs/results-tables.md say what the records say.

The numbers live once, as data in docs/records/; scripts/results_tables.py writes every page
that shows them. These tests fail when a page was edited by hand or a record changed without
the pages being regenerated.
"""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
from package_dirs import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import results_tables  # noqa: E402

sys.path.remove(str(ROOT / "scripts"))


def test_the_pages_equal_what_the_records_say():
    assert results_tables.main(["--check"]) == 0, "run scripts/results_tables.py"


def test_every_claim_has_its_command_date_and_cpu():
    for claim in results_tables.claims():
        assert claim["command"] and claim["cpu"], claim["id"]
        assert re.fullmatch(r"2026-\d\d-\d\d", claim["measured"]), claim["id"]
        assert (ROOT / "docs" / claim["page"]).is_file(), claim["page"]


def test_the_readme_states_the_audit_score_of_its_record():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    claim = next(c for c in results_tables.claims() if c["id"] == "audit-zoo")
    assert f"**{claim['value']}**" in readme


def test_the_results_page_has_one_line_per_claim():
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    block = text.split(results_tables.BEGIN, 1)[1].split(results_tables.END, 1)[0]
    lines = [ln for ln in block.splitlines() if ln.startswith("- **")]
    assert len(lines) == len(results_tables.claims())
    assert all("`" in ln and "(2026-" in ln for ln in lines)


@pytest.mark.parametrize("record", ["headline.json", "audit-zoo-smollm2-135m-test.json", "ci-runs.json"])
def test_a_changed_record_makes_the_check_fail(record, tmp_path, monkeypatch, capsys):
    records = tmp_path / "records"
    shutil.copytree(results_tables.RECORDS, records)
    data = json.loads((records / record).read_text(encoding="utf-8"))
    if record == "headline.json":
        data["claims"][0]["value"] = "smollm2 0.71, gemma3 0.80"
    elif record == "ci-runs.json":
        data["runs"][-1]["passed"] += 1
    else:
        data["score"]["correct"] += 1
    (records / record).write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(results_tables, "RECORDS", records)
    assert results_tables.main(["--check"]) == 1
    assert "run scripts/results_tables.py" in capsys.readouterr().err
