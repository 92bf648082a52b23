"""The published gpt-4o-mini menu study that liedar prints beside a run: read, checked, compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from liedar.behavioral import menus_published
from liedar.behavioral.menus_published import beside_published, published_menu_study
from liedar.core.errors import LiedarError

RECORDS = Path(__file__).resolve().parents[2] / "docs" / "records"


@pytest.fixture
def reread():
    """The loader caches the file; a test that swaps the file reads it afresh, and leaves the cache clean."""
    published_menu_study.cache_clear()
    yield
    published_menu_study.cache_clear()


def test_every_breakdown_of_the_shipped_counts_adds_up_to_its_total(reread):
    ref = published_menu_study()
    for rates in (ref.sarp_t0, ref.sarp_modal_sampled, ref.rum_exact_sampled):
        for key, cells in rates.by.items():
            assert sum(c.n for c in cells.values()) == rates.all.n, key
            assert sum(c.successes for c in cells.values()) == rates.all.successes, key
    assert (ref.sarp_t0.all.successes, ref.sarp_t0.all.n) == (210, 250)
    assert sum(ref.iia_reversals_t0["scenario"].values()) == sum(ref.iia_reversals_t0["framing"].values())


def test_a_damaged_reference_file_is_refused_not_printed(tmp_path, monkeypatch, reread):
    """A breakdown that no longer adds up (a hand edit, a truncated copy) stops with the file named."""
    raw = json.loads(menus_published.PUBLISHED_FILE.read_text(encoding="utf-8"))
    raw["sarp_t0"]["tier"]["clear"] = [70, 75]
    damaged = tmp_path / "menus_published.json"
    damaged.write_text(json.dumps(raw))
    monkeypatch.setattr(menus_published, "PUBLISHED_FILE", damaged)
    with pytest.raises(LiedarError, match="sarp_t0 by tier does not add up"):
        published_menu_study()


def _record(name: str) -> dict:
    path = RECORDS / name
    if not path.is_file():
        pytest.skip(f"{name} is not in docs/records")
    return json.loads(path.read_text(encoding="utf-8"))["result"]


def test_the_exact_study_is_printed_beside_their_temperature_0_study(reread):
    """smollm2-135m's full exact study (a saved record): each row carries this run's count and
    theirs, with Wilson intervals, and the reversal counts carry their designs' sizes."""
    rec = _record("menus-smollm2-135m-bf16-exact.json")
    table = beside_published("smollm2-135m", rec["mode"], rec["configs"])
    assert "| SARP pass, temperature-0 choice | 0.00 [0.00, 0.02] (0/200) | 0.84 [0.79, 0.88] (210/250) |" in table
    assert "| SARP pass, temperature-0 choice, tier ambiguous | 0.00 [0.00, 0.07] (0/50) | 0.88" in table
    reversals = sum(c["iia_reversals"] for c in rec["configs"] if c["scenario"] == "job_screening")
    row = f"| IIA reversals, scenario job_screening | {reversals} in 40 configurations | 15 in 50 configurations |"
    assert row in table
    assert "menus answered" not in table  # the exact law reads letters: it has no parse-fails to compare
    assert "commit 2237684" in table


def test_the_sampled_study_is_printed_beside_their_k_20_study(reread):
    """gemma3-270m's whole sampled study (a saved record), and its procurement scenario alone:
    the scenarios a part did not run say no data (–), never 0."""
    rec = _record("menus-gemma3-270m-bf16-sampled.json")
    table = beside_published("gemma3-270m", rec["mode"], rec["configs"])
    rum = "| RUM exactly consistent (no noise allowance) | 0.00 [0.00, 0.02] (0/200) | 0.62 [0.56, 0.68] (150/241) |"
    assert rum in table
    mixed = [c["mixed_menus"] for c in rec["configs"] if c.get("mixed_menus") and c["mixed_menus"]["n"]]
    k, n = sum(m["successes"] for m in mixed), sum(m["n"] for m in mixed)
    assert f"({k}/{n}) | 0.10 [0.09, 0.11] (365/3609) |" in table
    assert "IIA reversals" not in table
    procurement = [c for c in rec["configs"] if c["scenario"] == "procurement"]
    part = beside_published("gemma3-270m", rec["mode"], procurement)
    assert "| SARP pass, modal choice of K, scenario support_triage | – | 0.90 [0.79, 0.96] (45/50) |" in part
    assert "| SARP pass, modal choice of K, scenario procurement | 0.00 [0.00, 0.09] (0/40) |" in part
