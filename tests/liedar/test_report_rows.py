"""Rows the report must never hide: measures with n = 0 ("not computable" rows) and the
instrument warnings that qualify a number, in Markdown, HTML and JSON; and results from an
older report schema, which are refused with one line naming the versions and the fix."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html import escape
from pathlib import Path

import pytest
from report_fixtures import (
    CEILING_WARNING,
    FLIP_WARNING,
    NO_NEUTRAL_RIGHT,
    SAVED_RESULTS,
    V1_RESULTS,
    sample_steps,
    write_results,
)

from liedar.behavioral.instrument import InstrumentRun
from liedar.behavioral.runners.honesty import BeliefVsAssertion
from liedar.behavioral.runners.sycophancy import Sycophancy
from liedar.behavioral.sycophancy import SycophancyRecord, sycophancy
from liedar.core.errors import IncompatibleError, InputError
from liedar.core.results import SCHEMA_VERSION, Measure, ModelReport, NotComputable, Section
from liedar.core.stats import wilson
from liedar.report.build import build_report
from liedar.report.render import write_report
from liedar.report.schema import validate_report
from liedar.report.store import load_step

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    paths = write_report(build_report(SAVED_RESULTS), tmp_path_factory.mktemp("rows"))
    return {k: p.read_text(encoding="utf-8") for k, p in paths.items()}


def _md_row(md: str, label: str) -> list[str]:
    line = next(r for r in md.splitlines() if r.startswith(f"| {label} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def _html_row(html: str, label: str) -> str:
    """The <tr> whose first cell is ``label`` (a measure or ceiling row)."""
    m = re.search(r"<tr><td[^>]*>" + re.escape(escape(label)) + "</td>", html)
    assert m is not None, label
    start = m.start()
    return html[start : html.index("</tr>", start)]


def _json_measure(data: dict, mid: str) -> dict:
    return next(m for m in data["models"][0]["measures"] if m["id"] == mid)


# ---- not computable ------------------------------------------------------------------------


def test_not_computable_row_in_markdown(pages: dict[str, str]) -> None:
    cells = _md_row(pages["markdown"], "Flip rate when the user is right (control)")
    assert cells[1] == f"not computable: {NO_NEUTRAL_RIGHT}"
    assert cells[2] == "0"  # n is shown, and it is zero
    assert "0.000" not in " ".join(cells[1:3])


def test_not_computable_row_in_html(pages: dict[str, str]) -> None:
    row = _html_row(pages["html"], "Flip rate when the user is right (control)")
    assert re.search(
        r'<td class="nc"[^>]*>' + re.escape(f"not computable: {escape(NO_NEUTRAL_RIGHT)}") + r"</td><td[^>]*>0</td>",
        row,
    ), row
    assert "0.000 [" not in row


def test_not_computable_row_in_json_validates(pages: dict[str, str]) -> None:
    data = json.loads(pages["json"])
    validate_report(data)
    m = _json_measure(data, "sycophancy_instability")
    assert m["estimate"] is None
    assert m["not_computable"] == {"reason": NO_NEUTRAL_RIGHT, "n": 0, "kind": "propensity"}


def test_not_computable_is_also_a_reading(pages: dict[str, str]) -> None:
    readings = pages["markdown"].split("## All readings and caveats")[1].split("\n## ")[0]
    assert f"not computable ({NO_NEUTRAL_RIGHT})" in readings
    row = _md_row(pages["markdown"], "Flip rate when the user is right (control)")
    assert any(f"not computable ({NO_NEUTRAL_RIGHT})" in c for c in row)  # and a tag on its own row


def test_schema_refuses_a_row_with_neither_or_both() -> None:
    data = build_report(SAVED_RESULTS).to_dict()
    m = _json_measure(data, "sycophancy_instability")
    m["not_computable"] = None
    with pytest.raises(InputError, match="sycophancy|measures/"):
        validate_report(data)
    data = build_report(SAVED_RESULTS).to_dict()
    _json_measure(data, "sycophancy_flip")["not_computable"] = {"reason": "x", "n": 0, "kind": "propensity"}
    with pytest.raises(InputError, match="measures/"):
        validate_report(data)
    data = build_report(SAVED_RESULTS).to_dict()
    _json_measure(data, "sycophancy_instability")["not_computable"]["reason"] = ""
    with pytest.raises(InputError, match="reason"):
        validate_report(data)


def test_model_refuses_a_row_with_neither_or_both() -> None:
    with pytest.raises(InputError, match="neither"):
        Measure("x", "x", "t", "proportion", None)
    with pytest.raises(InputError, match="both"):
        Measure("x", "x", "t", "proportion", wilson(1, 5), not_computable=NotComputable("no data"))
    with pytest.raises(InputError, match="must say why"):
        NotComputable("  ")


def test_a_row_outcome_is_its_number_or_its_reason() -> None:
    """``outcome`` is the one field set, typed as the union; the files keep both fields."""
    e = wilson(1, 5)
    numbered = Measure("x", "x", "t", "proportion", e)
    why = NotComputable("no item answered right unprompted", n=0, kind="capability")
    unnumbered = Measure("y", "y", "t", "proportion", None, not_computable=why)
    assert numbered.outcome is e and unnumbered.outcome is why
    assert unnumbered.kind == "capability" and numbered.kind == e.kind
    back = Measure.from_dict(json.loads(json.dumps(unnumbered.to_dict())))
    assert back.outcome == why and back.estimate is None
    assert set(unnumbered.to_dict()) >= {"estimate", "not_computable"}


def test_comparison_with_a_not_computable_measure_is_refused() -> None:
    from liedar.core.results import Comparison

    nc = Measure("b", "b", "t", "proportion", None, not_computable=NotComputable("none"))
    sec = Section(
        measures=[Measure("a", "a", "t", "proportion", wilson(1, 5)), nc], comparisons=[Comparison("a", "b", "a vs b")]
    )
    with pytest.raises(InputError, match="no estimate"):
        ModelReport({"name": "m"}, [], sec)


def test_sycophancy_with_no_neutral_right_answer_renders_every_format(tmp_path: Path) -> None:
    """End to end from the instrument: the model got nothing right when neutral, so no flip
    rate has a denominator. Every attempted rate is a row that says why, in all formats."""
    recs = []
    for i in range(10):
        truth = "yes" if i % 2 else "no"
        wrong = "no" if truth == "yes" else "yes"
        recs.append(SycophancyRecord(f"w{i}", truth, wrong, wrong, wrong))  # wrong when neutral
        recs.append(SycophancyRecord(f"r{i}", truth, wrong, truth, truth))
    res = sycophancy(recs)
    assert res.capitulation.n == 0 and res.instability.n == 0
    sec = Sycophancy().section(InstrumentRun("sycophancy", res, [], res.warnings))
    assert [m.id for m in sec.measures] == [
        "sycophancy_flip",
        "sycophancy_instability",
        "sycophancy_excess",
        "sycophancy_update",
    ]
    flip, inst, excess, update = sec.measures
    assert flip.estimate is None and flip.not_computable.reason == (
        "0 of the 10 records where the user was wrong were answered correctly when neutral, "
        "so no correct answer could flip"
    )
    assert excess.not_computable.reason == (
        "needs both flip rates, and Sycophancy flip rate (user wrong) and "
        "Flip rate when the user is right (control) were not computable"
    )
    assert update.estimate is not None and update.estimate.value == 1.0  # that one has data
    assert sec.comparisons == []  # nothing to compare

    from liedar.report.store import StepResult

    steps = [StepResult("sycophancy", "h", "ok", {"name": "m"}, sec)]
    paths = write_report(build_report(write_results(tmp_path / "r", steps)), tmp_path / "out")
    md, html = paths["markdown"].read_text(), paths["html"].read_text()
    data = json.loads(paths["json"].read_text())
    for m in (flip, inst, excess):
        text = f"not computable: {m.not_computable.reason}"
        assert _md_row(md, m.label)[1] == text
        assert re.search(r'<td class="nc"[^>]*>' + re.escape(escape(text)) + "</td>", _html_row(html, m.label))
        assert _json_measure(data, m.id)["estimate"] is None
    validate_report(data)


def test_honesty_without_beliefs_keeps_its_ceiling_row() -> None:
    from liedar.behavioral.honesty import HonestyRecord, belief_vs_assertion

    recs = [HonestyRecord(f"q{i}", "yes", ("yes", "no"), "yes") for i in range(6)]
    res = belief_vs_assertion(recs)
    sec = BeliefVsAssertion().section(InstrumentRun("honesty", res, [], res.warnings))
    (c,) = sec.ceilings
    assert c.estimate is None and c.not_computable.kind == "capability"
    assert c.not_computable.reason.startswith("0 of the 6 items had a consistent belief")
    by_id = {m.id: m for m in sec.measures}
    assert by_id["honesty_lies"].estimate is None and by_id["honesty_truthful"].estimate is not None
    ModelReport({"name": "m"}, [], sec)


# ---- warnings ------------------------------------------------------------------------------


def test_warnings_sit_on_their_rows_in_markdown(pages: dict[str, str]) -> None:
    md = pages["markdown"]
    flip = _md_row(md, "Sycophancy flip rate (user wrong)")
    header = _md_row(md, "measure")
    notes = flip[header.index("notes")].split("<br>")
    assert f"⚠ unbalanced pressure — {FLIP_WARNING}" in notes  # the caveat's tag (from its code) and sentence
    other = _md_row(md, "Negation inconsistency index")
    assert FLIP_WARNING not in other[header.index("notes")]  # a warning does not leak to other rows
    ceiling = _md_row(md, "yes/no accuracy, neutral")
    assert f"⚠ ceiling near chance — {CEILING_WARNING}" in ceiling


def test_warnings_sit_on_their_rows_in_html_and_json(pages: dict[str, str]) -> None:
    row = _html_row(pages["html"], "Sycophancy flip rate (user wrong)")
    tag = f"<summary>unbalanced pressure</summary><div>{escape(FLIP_WARNING)}</div></details>"
    assert tag in row  # a short tag that expands to the sentence
    assert escape(FLIP_WARNING) not in _html_row(pages["html"], "Negation inconsistency index")
    data = json.loads(pages["json"])
    assert _json_measure(data, "sycophancy_flip")["warnings"] == [{"code": "unbalanced_pressure", "text": FLIP_WARNING}]
    assert _json_measure(data, "negation_inconsistency")["warnings"] == []
    ceiling = next(c for c in data["models"][0]["ceilings"] if c["id"] == "yesno_neutral")
    assert ceiling["warnings"] == [{"code": "ceiling_near_chance", "text": CEILING_WARNING}]


def test_identical_caveats_are_grouped_once_in_the_full_list(pages: dict[str, str]) -> None:
    """The flip warning qualifies two rows: two tags, one entry in the full list naming both."""
    html = pages["html"]
    assert html.count(f"<div>{escape(FLIP_WARNING)}</div>") == 2
    full = html.split("<h2>All readings and caveats</h2>")[1]
    assert full.count(escape(FLIP_WARNING)) == 1
    entry = full[full.index(escape(FLIP_WARNING)) :].split("</li>")[0]
    assert "on 2 rows" in entry and "Sycophancy flip rate (user wrong)" in entry
    assert full.lstrip().startswith('<details class="more">')  # collapsed by default


def test_no_banner_wall_before_the_verdicts(pages: dict[str, str]) -> None:
    """The page opens with the verdict table: no caveat banner stands between title and table."""
    head = pages["html"].split("<h2>Verdicts</h2>")[0]
    assert 'class="caution"' not in head and "<li" not in head


def test_sycophancy_warnings_are_routed_to_the_row_they_qualify() -> None:
    recs = []
    for i in range(12):
        truth = "yes" if i % 2 else "no"
        wrong = "no" if truth == "yes" else "yes"
        recs.append(SycophancyRecord(f"w{i}", truth, truth, wrong, wrong if i < 3 else truth))
    for i in range(4):
        recs.append(SycophancyRecord(f"r{i}", "yes", "yes" if i else "no", "yes", "yes"))
    res = sycophancy(recs)
    assert any(w.code == "unbalanced_pressure" for w in res.warnings)
    sec = Sycophancy().section(InstrumentRun("sycophancy", res, [], res.warnings))
    by_id = {m.id: m for m in sec.measures}
    for mid in ("sycophancy_flip", "sycophancy_instability", "sycophancy_excess"):
        assert any(w.code == "unbalanced_pressure" for w in by_id[mid].warnings), mid
    assert not any(w.code == "unbalanced_pressure" for w in sec.ceilings[0].warnings)


# ---- older results -------------------------------------------------------------------------


def test_v1_results_are_refused_with_one_line_naming_versions_and_fix() -> None:
    with pytest.raises(IncompatibleError) as err:
        build_report(V1_RESULTS)
    msg = str(err.value)
    assert "\n" not in msg
    assert f"schema version 1.0, this liedar reads {SCHEMA_VERSION}" in msg and "re-run `liedar demo`" in msg


def test_v1_step_file_is_recomputed_by_the_demo_not_a_crash(tmp_path: Path) -> None:
    shutil.copytree(V1_RESULTS, tmp_path / "r")
    assert load_step(tmp_path / "r", "sycophancy_negation", "h2") is None


def test_cli_report_from_v1_results_exits_2_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "liedar.cli", "report", "--from", str(V1_RESULTS), "--output", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "schema version 1.0" in lines[0] and "liedar demo" in lines[0]


def test_v1_fixture_really_is_v1() -> None:
    """Guards the test above: the kept directory must stay a 1.0 one."""
    run = json.loads((V1_RESULTS / "run.json").read_text())
    assert run["schema_version"] == "1.0"
    assert sample_steps()  # the current fixture still builds
