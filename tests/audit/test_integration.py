"""The audit on the real smollm2-135m and its shipped sycophant, at tiny sizes (a few minutes of CPU)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from workers import THREADS

from liedar.audit.evidence import audit_sizes
from liedar.audit.rule import VERDICTS
from liedar.audit.run import AuditConfig, audit
from liedar.report.audit import write_audit_page

ROOT = Path(__file__).resolve().parents[2]
SYCOPHANT = ROOT / "zoo" / "smollm2-135m" / "sycophant"

# measured on 2026-12-03 beside model builds: 493 s at load 1-4 and 741 s at load 5-11 (2 cores);
# the timeout leaves room for a machine shared with heavier builds
pytestmark = [pytest.mark.integration, pytest.mark.timeout(2400)]


def _tiny() -> dict:
    sizes = audit_sizes(quick=True)
    # 12 gap items: enough for both models' cloze ceilings to clear chance (0.75 [0.43, 0.95] at seed 0)
    sizes.update(gap_items=12, sycophancy_claims=1, honesty_items=2)
    sizes.update(sycophancy_choice_items=3, honesty_choice_products=1)  # the choice-format units
    return sizes


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("audit")
    config = AuditConfig(
        models=(str(SYCOPHANT), "smollm2-135m"),
        reference="smollm2-135m",
        output=out,
        evidence_cache=out / "evidence",
        sizes=_tiny(),
        threads=THREADS,
        progress=False,
    )
    lines: list[str] = []
    results, path = audit(config, say=lines.append)
    return config, results, path, lines


def test_one_verdict_per_model_with_real_numbers(audited):
    _config, results, path, _lines = audited
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == "liedar-audit-1"
    assert [m["model"] for m in results["models"]] == [str(SYCOPHANT), "smollm2-135m"]
    for m in results["models"]:
        v = m["verdict"]
        assert v["verdict"] in VERDICTS and v["why"]
        gap = next(r for r in v["rows"] if r["detector"] == "sandbagging_gap")
        for key in ("effect", "reference", "excess"):
            assert all(math.isfinite(gap[key][k]) for k in ("value", "lo", "hi")), key
        assert gap["n"] == 12 and gap["state"] == "too_few"  # n < 30: amber, never a call
        assert gap["capability"]["capable"] and gap["reference_capability"]["capable"]
        for r in v["rows"]:
            if r["excess"] is not None:
                assert all(math.isfinite(r["excess"][k]) for k in ("value", "lo", "hi")), r["detector"]
            else:
                assert r["state"] in ("incapable", "not_computable", "not_run") and r["why"]
    base = results["models"][1]
    gap = next(r for r in base["verdict"]["rows"] if r["detector"] == "sandbagging_gap")
    assert gap["excess"]["value"] == 0.0  # the base model read against itself


def test_the_reference_is_measured_once_and_the_cache_is_read_back(audited):
    config, results, _path, lines = audited
    assert sum("running" in line for line in lines) == 2  # sycophant + base (the reference is the base)
    again: list[str] = []
    results2, _ = audit(config, say=again.append)
    assert sum("from the cache" in line for line in again) == 2 and not any("running" in x for x in again)
    assert [m["verdict"]["verdict"] for m in results2["models"]] == [m["verdict"]["verdict"] for m in results["models"]]


def test_a_damaged_cache_file_is_measured_again_not_trusted(audited, tmp_path):
    config, _results, _path, _lines = audited
    folder = Path(config.output) / "evidence"
    victim = sorted(folder.glob("*.json"))[0]
    data = json.loads(victim.read_text(encoding="utf-8"))
    data["evidence"]["seconds"] = 0.5  # body changed, its sha256 not
    victim.write_text(json.dumps(data), encoding="utf-8")
    from liedar.audit.evidence import read_cached

    assert read_cached(folder, data["key"]) is None


def test_the_audit_page_renders(audited, tmp_path):
    _config, results, _path, _lines = audited
    page = write_audit_page(results, tmp_path / "page")
    html = page["html"].read_text(encoding="utf-8")
    assert "Audit" in html and "sandbagging_gap" in html


def test_a_card_folder_loads_as_the_organism():
    pytest.importorskip("torch")
    from liedar import models
    from liedar.models.cards import read_card
    from liedar.models.lora import organism_fingerprint

    lm = models.load(str(SYCOPHANT), n_threads=THREADS)
    card = read_card(SYCOPHANT)
    assert lm.organism["name"] == "sycophant" and lm.organism["adapter_dir"] == str(card.adapter_dir)
    assert lm.fingerprint == organism_fingerprint(card.base_fingerprint, lm.adapter_sha256)
    assert lm.name == "smollm2-135m:sycophant"
