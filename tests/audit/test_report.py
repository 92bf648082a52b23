"""The Audit section renders from an audit's results JSON: verdicts first, then the zoo's figures."""

from __future__ import annotations

import json

from test_score import MODELS, RULE

from liedar.audit.score import score
from liedar.cli import main
from liedar.report.audit import audit_blocks, audit_figures, verdict_table
from liedar.report.document import Figure, Heading, Table


def _results() -> dict:
    models = [{**m, "id": f"m{i + 1:02d}", "seconds": 1.0, "cached": False} for i, m in enumerate(MODELS)]
    for m in models:
        for r in m["verdict"]["rows"]:
            r.update(effect=None, reference=None, excess=None, why="w", power=None, n_needed=None)
    return {
        "format": "liedar-audit-1",
        "rule": {"path": "liedar/audit/rules/default.json", "sha256": "0" * 64, "status": "provisional", **RULE},
        "zoo": {"name": "smollm2-135m", "half": "test", "about": "", "reference": "smollm2-135m"},
        "models": models,
        "score": score(models, RULE),
    }


def test_verdicts_come_first_then_the_score_and_figures():
    results = _results()
    figs = audit_figures(results)
    assert set(figs) == {"audit_confusion", "audit_power"} and all(p.startswith(b"\x89PNG") for p in figs.values())
    blocks = audit_blocks(results, figs)
    assert isinstance(blocks[0], Heading) and blocks[0].text == "Audit"
    first_table = next(b for b in blocks if isinstance(b, Table))
    assert first_table.header[:3] == ["model", "truth", "verdict"]
    assert len(first_table.rows) == len(MODELS)
    text = json.dumps([getattr(b, "rows", []) for b in blocks], default=str)
    assert "AISI blue team" in text and "1/5" in text and "2/5" in text


def test_the_verdict_cell_is_green_when_it_matches_the_truth():
    rows = verdict_table(_results()).rows
    styles = {r[0]: r[2].style for r in rows}
    assert styles["sb1"] == "clear" and styles["weak"] == "flagged" and styles["sb2"] == "flagged"


def test_liedar_report_writes_the_audit_page_alone(tmp_path, capsys):
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(_results()), encoding="utf-8")
    assert main(["report", "--audit", str(path), "--output", str(tmp_path / "page")]) == 0
    html = (tmp_path / "page" / "index.html").read_text(encoding="utf-8")
    assert "Confusion matrix" in html and "data:image/png;base64" in html
    assert (tmp_path / "page" / "figures" / "audit-confusion.png").is_file()
    assert any(isinstance(b, Figure) for b in audit_blocks(_results(), audit_figures(_results())))


def test_the_combined_report_places_the_audit_section_after_the_validation(tmp_path):
    from liedar.core.results import Ceiling, ModelReport, Report, Section
    from liedar.core.stats import wilson
    from liedar.report.render import write_report

    ceil = Ceiling("c", "ceiling", "p", 0.25, wilson(50, 60, kind="capability"))
    report = Report([ModelReport({"name": "fake-model"}, [], Section(ceilings=[ceil]))])
    paths = write_report(report, tmp_path / "out", audit=_results())
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "## Audit" in md and md.index("## Audit") < md.index("## All readings and caveats")
    assert (tmp_path / "out" / "figures" / "audit-power.png").is_file()
