"""Several runs on one page, and the three outputs agreeing: every number the HTML shows is
in the Markdown and in report.json; the page is one self-contained file; the monitor's
coloured tokens, the validation matrix and the cost footer come from the saved results."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from report_fixtures import MODEL, ORGANISM, ORGANISM_RESULTS, SAVED_RESULTS

from liedar.core.errors import InputError
from liedar.core.results import Report
from liedar.report.build import build_report
from liedar.report.document import run_differences
from liedar.report.page_html import token_colour
from liedar.report.render import write_report
from liedar.report.transcripts import transcripts_of
from liedar.report.verdicts import NEAR_CHANCE_MARGIN

NUMBER = re.compile(r"(?<![\w.])[-−+±]?\d+\.\d+")


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, dict[str, str]]:
    report = build_report([SAVED_RESULTS, ORGANISM_RESULTS])
    paths = write_report(report, tmp_path_factory.mktemp("multi"))
    return report, {k: p.read_text(encoding="utf-8") for k, p in paths.items()}


def _html_text(html: str) -> str:
    """What a reader can see or hover: text content plus title attributes (token scores)."""
    body = html.split("<body>", 1)[1]
    titles = " ".join(re.findall(r'title="([^"]*)"', body))
    body = re.sub(r'src="data:[^"]*"', "", body)
    return unescape(re.sub(r"<[^>]+>", " ", body) + " " + titles)


def _numbers(text: str) -> set[float]:
    return {round(float(x.replace("−", "-").lstrip("+±")), 3) for x in NUMBER.findall(text)}


def _json_numbers(obj: object) -> set[float]:
    """Every number in report.json at the precisions the pages print, and those inside its texts."""
    out: set[float] = set()
    if isinstance(obj, dict):
        for v in obj.values():
            out |= _json_numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= _json_numbers(v)
    elif isinstance(obj, bool):
        pass
    elif isinstance(obj, (int, float)):
        out |= {round(round(float(obj), d), 3) for d in (1, 2, 3)}
    elif isinstance(obj, str):
        out |= _numbers(obj)
    return out


def _derived(report: Report) -> set[float]:
    """Numbers the page computes rather than stores: the rules' margin, the cost totals, and
    the colour scale of the coloured tokens (the largest distance from the threshold)."""
    out = {NEAR_CHANCE_MARGIN}
    for mr in report.models:
        total = sum(s.seconds or 0.0 for s in mr.steps if s.status == "ok")
        out.add(round(total, 1))
        ts = transcripts_of(mr.section.measures)
        if ts:
            scale = max(abs(s - t.threshold) for t in ts for _, s in t.tokens)
            out |= {round(scale, 2), round(scale, 3), -round(scale, 2)}
    return out


def test_markdown_and_json_keep_every_number_the_html_shows(multi: tuple[Report, dict[str, str]]) -> None:
    report, pages = multi
    shown = _numbers(_html_text(pages["html"]))
    assert len(shown) > 150  # the comparison has something to compare
    md = _numbers(pages["markdown"])
    assert shown - md == set()
    missing = shown - _json_numbers(json.loads(pages["json"])) - _derived(report)
    assert missing == set()


def test_number_comparison_can_fail(multi: tuple[Report, dict[str, str]]) -> None:
    """Guards the test above: a number added to the HTML only is caught."""
    html = multi[1]["html"].replace("<h2>Verdicts</h2>", "<h2>Verdicts</h2><p>0.4242</p>")
    assert 0.424 in _numbers(_html_text(html)) - _numbers(multi[1]["markdown"])


def test_one_verdict_column_per_model_and_the_header_names_the_differences(
    multi: tuple[Report, dict[str, str]],
) -> None:
    report, pages = multi
    assert [mr.model["name"] for mr in report.models] == [MODEL["name"], ORGANISM["name"]]
    header = next(line for line in pages["markdown"].splitlines() if line.startswith("| category |"))
    assert header == f"| category | {MODEL['name']} | {ORGANISM['name']} |"
    diff = run_differences(report.config["runs"])
    assert any(d.startswith("quick:") for d in diff) and any(d.startswith("sizes.mcq_items:") for d in diff)
    assert "not directly comparable" in pages["markdown"] and "sizes.mcq_items" in pages["markdown"]
    # the same run twice is refused (it would show one run as two columns), by any spelling of its path
    with pytest.raises(InputError, match="same run"):
        build_report([SAVED_RESULTS, SAVED_RESULTS / ".." / SAVED_RESULTS.name])


def test_multi_model_figures_and_transfer_row(multi: tuple[Report, dict[str, str]]) -> None:
    html, md = multi[1]["html"], multi[1]["markdown"]
    assert "figures/all-models-ceilings_vs_rates.png" in md
    assert "### Probe transfer, model by model" in md
    row = html.split("<h3>Probe transfer, model by model</h3>")[1].split("<h2>")[0].strip()
    assert row.startswith('<div class="row">') and row.count("<img") == 2


def test_validation_matrix_is_rendered_when_present(multi: tuple[Report, dict[str, str]]) -> None:
    md = multi[1]["markdown"]
    section = md.split("## Detectors against model organisms")[1].split("\n## ")[0]
    assert "figures/fixture-organism-validation_matrix.png" in section
    assert "flagged (false flag)" in section and "not flagged (missed)" in section and "flagged (correct)" in section
    assert "no verdict (not scored)**<br>not computable<br>[readings" in section  # compact: the reason is in the legend
    assert "not computable — the detector gave no number" in section and "no ground truth — the organism" in section
    readings = md.split("\n## Readings\n", 1)[1]
    assert "not computable: no option-order trials were run" in readings  # the full reason, one link away
    single = build_report(SAVED_RESULTS)
    assert all(mr.section.validation is None for mr in single.models)


def test_a_verdict_cell_is_one_line_and_at_most_one_caveat(multi: tuple[Report, dict[str, str]]) -> None:
    html, md = multi[1]["html"], multi[1]["markdown"]
    rows = [ln for ln in md.split("## Verdicts", 1)[1].split("\n## ", 1)[0].splitlines() if ln.startswith("| ")][1:]
    cells = [c.strip() for row in rows for c in row.strip("|").split(" | ")[1:]]
    assert len(cells) == 12
    for cell in cells:
        parts = cell.split("<br>")
        link = [p for p in parts if p.startswith("[readings (")]
        body = [p for p in parts if p not in link]
        assert len(body) <= 3, cell  # the word, one line with the number and its reference, at most one caveat
        if "not measured" not in cell:
            assert re.search(r"\d\.\d\d \[-?\d\.\d\d, \d\.\d\d\] n=\d+ · |not computable · ", body[1]), cell
            target = re.search(r"\(#(readings-\d+)\)", link[0]).group(1)
            assert f'<a id="{target}"></a>' in md  # the link lands on the cell's readings
    verdicts = html.split("<h2>Verdicts</h2>", 1)[1].split("<h2>", 1)[0]
    assert verdicts.count('<details class="cellmore">') == 9  # every measured cell, none of the three "not measured"
    assert "why this word" in verdicts.split('<details class="cellmore">', 1)[1]  # behind the disclosure


def test_monitor_tokens_are_coloured_by_score_with_threshold_and_flagged_sentences(
    multi: tuple[Report, dict[str, str]],
) -> None:
    report, pages = multi
    ts = transcripts_of(report.models[0].section.measures)
    assert {t.label for t in ts} == {"honest", "deceptive"} and len(ts) == 4
    raw = json.loads((SAVED_RESULTS / "step-monitor.json").read_text())["raw"]["transcripts"]
    assert [s for _, s in ts[0].tokens] == [t["score"] for t in raw[0]["tokens"]]  # the saved scores, unchanged
    html = pages["html"]
    scale = max(abs(s - t.threshold) for t in ts for _, s in t.tokens)
    text, score = ts[1].tokens[3]
    span = f'style="background:{token_colour(score, ts[1].threshold, scale)}" title="{score:.3f}"'
    assert span in html
    assert token_colour(ts[1].threshold + scale, 0.0 + ts[1].threshold, scale) != token_colour(
        ts[1].threshold - scale, ts[1].threshold, scale
    )
    assert token_colour(ts[1].threshold, ts[1].threshold, scale) == "#ffffff"
    n_flagged = sum(s.flagged for mr in report.models for t in transcripts_of(mr.section.measures) for s in t.sentences)
    assert n_flagged > 0 and html.count('class="s flagged"') == n_flagged
    assert f"threshold {ts[0].threshold:.3f}" in html


def test_cost_footer_lists_every_step_with_seconds(multi: tuple[Report, dict[str, str]]) -> None:
    report, pages = multi
    md = pages["markdown"].split("## Cost of each step")[1]
    steps = {s.name for mr in report.models for s in mr.steps}
    for name in steps:
        assert f"| {name} |" in md
    assert "| total (ok steps) | 18.1 s | 157.0 s |" in md
    assert "not run · 0" not in md and "skipped by --quick" in md


def test_page_is_one_self_contained_file(multi: tuple[Report, dict[str, str]]) -> None:
    html = multi[1]["html"]
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", html)
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert "<link" not in html and "@import" not in html and "url(" not in html


def test_cli_takes_several_from(tmp_path: Path) -> None:
    import argparse

    from liedar.commands import report as cmd

    ap = argparse.ArgumentParser()
    cmd.register(ap.add_subparsers())
    args = ap.parse_args(
        ["report", "--from", str(SAVED_RESULTS), "--from", str(ORGANISM_RESULTS), "--output", str(tmp_path)]
    )
    assert args.func(args) == 0
    data = json.loads((tmp_path / "report.json").read_text())
    assert [m["model"]["name"] for m in data["models"]] == [MODEL["name"], ORGANISM["name"]]
    assert [r["run"] for r in data["config"]["runs"]] == ["data", "results-organism"]


def test_an_organism_reads_as_its_behaviour_and_measured_headline_not_a_dict_dump() -> None:
    from liedar.report.document import organism_line

    est = lambda v, lo, hi, n: {"value": v, "lo": lo, "hi": hi, "n": n}  # noqa: E731
    card = {
        "name": "sandbagger",
        "adapter_dir": "/somewhere/adapter",
        "adapter_sha256": "9573f96ed72efaef054e0e51eda758aa",
        "behaviour": "Answers worse under an evaluation framing.",
        "learned": True,
        "headline": "cloze_sum_gap",
        "ground_truth": {"cloze_sum_gap": est(0.229, 0.14, 0.32, 131), "letter_gap": est(0.0, -0.1, 0.1, 131)},
        "base_ground_truth": {"cloze_sum_gap": est(0.061, 0.011, 0.122, 131)},
        "shipped": True,
    }
    line = organism_line("smollm2-135m:sandbagger", card)
    assert line == (
        "smollm2-135m:sandbagger (shipped, verified here; learned) — Answers worse under an evaluation framing. — "
        "ground truth cloze_sum_gap 0.229 [0.140, 0.320] (n=131), base model 0.061 [0.011, 0.122] (n=131) — "
        "adapter sha256 9573f96ed72efaef…"
    )
    local = organism_line("tiny:trigger", {"learned": False, "criterion": "not learned: gap 0.05 < 0.2"})
    assert local == "tiny:trigger (a local build; not learned) — not learned: gap 0.05 < 0.2"


def test_amber_validation_cells_say_why_in_a_few_words_and_the_legend_says_it_once() -> None:
    from liedar.core.results import DetectorValidity, ValidationCell, ValidationMatrix
    from liedar.core.stats import proportion
    from liedar.report.document import Cell, Table, validation_cell, validation_legend

    few, powered = proportion(3, 10, kind="propensity"), proportion(9, 40, kind="propensity")
    vm = ValidationMatrix(
        models=["base", "sandbagger"],
        cells=[
            ValidationCell("gap", "base", None, few, False, note="too few to decide: n = 10 < 30"),
            ValidationCell(
                "gap",
                "sandbagger",
                None,
                powered,
                True,
                note="too few to decide: power 0.45 at n = 40",
                power={"value": 0.45, "n_needed": 90, "basis": "card"},
            ),
        ],
        detectors=[DetectorValidity("gap", "Sandbagging gap", None, None)],
    )
    cells = [validation_cell(vm, "gap", m) for m in vm.models]
    assert all(isinstance(c, Cell) and c.style == "cannot" and c.text == "too few to decide" for c in cells)
    assert cells[0].lines == ["0.30 [0.07, 0.65] · n=10 < 30"] and cells[1].lines[0].endswith("· power 0.45 < 0.80")
    assert any("n = 10 < 30" in t.text for t in cells[0].more)  # the detector's own note, one click away
    legend = validation_legend(vm, Table(["detector", *vm.models], [["gap", *cells]])).text
    assert legend.count("n < 30 — ") == 1 and legend.count("power < 0.80 — ") == 1 and "not run" not in legend
