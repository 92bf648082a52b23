"""The report renders from saved results, validates against its schema, and never shows a
rate without its interval and n (or a deception rate without its ceiling)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from report_fixtures import MODEL, SAVED_RESULTS, sample_steps, write_results

from liedar.core.errors import IncompatibleError, InputError
from liedar.core.results import SCHEMA_VERSION, Ceiling, Measure, ModelReport, Report, Section
from liedar.core.stats import Estimate, wilson
from liedar.report.build import build_report
from liedar.report.render import load_report_json, write_report
from liedar.report.schema import report_schema, validate_report


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, dict[str, Path]]:
    """The saved fixture rendered once for the module (figures are the slow part)."""
    report = build_report(SAVED_RESULTS)
    return report, write_report(report, tmp_path_factory.mktemp("report"))


def test_saved_fixture_renders_all_outputs(rendered: tuple[Report, dict[str, Path]]) -> None:
    paths = rendered[1]
    tmp_path = paths["html"].parent
    html = paths["html"].read_text(encoding="utf-8")
    md = paths["markdown"].read_text(encoding="utf-8")
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION and data["models"][0]["model"]["name"] == MODEL["name"]
    names = [f"{MODEL['name']}-{k}.png" for k in ("transfer_matrix", "layer_sweep", "position_choice")]
    names.append("all-models-ceilings_vs_rates.png")
    for name in names:
        assert (tmp_path / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"figures/{name}" in md
    assert html.count("data:image/png;base64,") == 4
    assert "weight_noise" in md and "not run" in md  # a skipped step stays visible


def test_html_is_self_contained(rendered: tuple[Report, dict[str, Path]]) -> None:
    html = rendered[1]["html"].read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", html), "external asset referenced"
    assert "<script" not in html and "http://" not in html and "https://" not in html


def test_saved_fixture_matches_current_fixture_numbers(tmp_path: Path) -> None:
    fresh = build_report(write_results(tmp_path / "r", sample_steps())).to_dict()
    saved = build_report(SAVED_RESULTS).to_dict()
    fresh.pop("created_utc"), saved.pop("created_utc")
    assert fresh == saved


def test_json_validates_against_schema_and_round_trips(rendered: tuple[Report, dict[str, Path]]) -> None:
    data = rendered[0].to_dict()
    jsonschema.Draft202012Validator.check_schema(report_schema())
    jsonschema.validate(data, report_schema())
    path = rendered[1]["json"]
    assert load_report_json(path).to_dict() == data


def test_schema_rejects_an_estimate_without_interval() -> None:
    data = build_report(SAVED_RESULTS).to_dict()
    del data["models"][0]["measures"][0]["estimate"]["lo"]
    with pytest.raises(InputError, match="lo"):
        validate_report(data)
    data = build_report(SAVED_RESULTS).to_dict()
    data["models"][0]["measures"][0]["estimate"]["n"] = 0
    with pytest.raises(InputError, match="n"):
        validate_report(data)


def _estimates(obj, path=""):
    """Every estimate-shaped dict in the report JSON, with where it sits."""
    if isinstance(obj, dict):
        if {"value", "method", "kind"} <= obj.keys():
            yield path, obj
        for k, v in obj.items():
            yield from _estimates(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _estimates(v, f"{path}/{i}")


def test_every_rate_has_interval_and_n() -> None:
    data = build_report(SAVED_RESULTS).to_dict()
    found = list(_estimates(data))
    assert len(found) > 20
    for where, e in found:
        assert isinstance(e.get("lo"), float) and isinstance(e.get("hi"), float), where
        assert e["lo"] <= e["value"] <= e["hi"], where
        assert isinstance(e.get("n"), int) and e["n"] >= 1, where


def test_markdown_shows_interval_n_and_ceiling_on_every_rate_row(rendered: tuple[Report, dict[str, Path]]) -> None:
    report, paths = rendered
    md = paths["markdown"].read_text(encoding="utf-8")
    section = md.split("### Deception measures")[1].split("###")[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith("| measure")]
    deception = [m for m in report.models[0].section.measures if m.kind != "quality"]
    assert len(rows) == len(deception)
    assert any(m.estimate is None for m in deception)  # the fixture holds a not-computable row
    for row, m in zip(rows, deception):
        cells = [c.strip() for c in row.strip("|").split("|")]
        if m.estimate is None:
            assert cells[1] == f"not computable: {m.not_computable.reason}" and cells[2] == "0", row
            continue
        assert re.fullmatch(r"-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]", cells[1]), row
        assert cells[2] == str(m.estimate.n)
        assert cells[4] == "not measured" or re.search(r"\d\.\d{3} \[", cells[4]), row


def test_model_refuses_bad_numbers() -> None:
    with pytest.raises(InputError, match="n=0"):
        Measure("x", "x", "t", "proportion", Estimate(0.1, 0.0, 0.2, 0, "wilson"))
    with pytest.raises(InputError, match="not a finite"):
        Measure("x", "x", "t", "proportion", Estimate(float("nan"), 0.0, 0.2, 5, "wilson"))
    with pytest.raises(InputError, match="outside its interval"):
        Measure("x", "x", "t", "proportion", Estimate(0.5, 0.0, 0.2, 5, "wilson"))
    sec = Section(measures=[Measure("x", "x", "t", "proportion", wilson(1, 5), ceiling="nope")])
    with pytest.raises(InputError, match="ceiling 'nope'"):
        ModelReport({"name": "m"}, [], sec)


def test_other_major_schema_version_is_refused(tmp_path: Path) -> None:
    data = build_report(SAVED_RESULTS).to_dict()
    data["schema_version"] = "3.0"
    with pytest.raises(
        IncompatibleError, match=f"schema version 3.0, this liedar reads {SCHEMA_VERSION}: .*upgrade liedar"
    ):
        Report.from_dict(data)


def test_missing_results_dir_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run.json missing"):
        build_report(tmp_path)


def test_two_models_get_separate_sections(tmp_path: Path) -> None:
    steps = sample_steps()
    other = {"name": "other-model", "backend": "fixture"}
    ceiling = Ceiling("c2", "other ceiling", "p", 0.25, wilson(9, 10, kind="capability"))
    from liedar.report.store import StepResult

    steps.append(StepResult("other", "h", "ok", other, Section(ceilings=[ceiling])))
    report = build_report(write_results(tmp_path / "r", steps))
    assert [m.model["name"] for m in report.models] == [MODEL["name"], "other-model"]
    from liedar.report.document import report_blocks
    from liedar.report.page_markdown import render_markdown

    md = render_markdown(report_blocks(report, {}), {})
    assert "## Model: other-model" in md and f"## Model: {MODEL['name']}" in md
    verdict_header = next(line for line in md.splitlines() if line.startswith("| category |"))
    assert verdict_header == f"| category | {MODEL['name']} | other-model |"  # one verdict column per model
