"""An audit's models measured on worker processes give the evidence one process gives.

The tiny random-weight model stands in for three models (a reference and two audited ones,
told apart by their identities): the pooled run must write and return, model by model, the
cells and capabilities the one-process run does, with the model-call cache out of play (each
run has its own evidence folder, and the tiny model's calls are not cached across them).
"""

from __future__ import annotations

from liedar.audit.evidence import audit_sizes
from liedar.audit.run import Loaded, Target, gather
from liedar.core._util.workers import WorkerPool


def _sizes() -> dict:
    sizes = audit_sizes(quick=True)
    sizes.update(gap_items=6, sycophancy_claims=1, honesty_items=2)
    sizes.update(sycophancy_choice_items=2, honesty_choice_products=1)
    return sizes


def _without_seconds(ev) -> dict:
    d = ev.to_dict()
    d.pop("seconds", None)
    return d


def test_pooled_evidence_equals_one_process_evidence(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    path = str(tiny_model_dir)
    ref = Target("reference", path, None, None, {"fingerprint": "tiny-reference", "adapter_sha256": ""})
    models = [Target(f"m{i}", path, None, None, {"fingerprint": f"tiny-{i}", "adapter_sha256": ""}) for i in (1, 2)]
    sizes = _sizes()
    one: list[str] = []
    serial = gather([ref, *models], sizes, 0, tmp_path / "one", Loaded(1), one.append, False, None, [ref])
    pooled_lines: list[str] = []
    with WorkerPool(2) as pool:
        pooled = gather(
            [ref, *models], sizes, 0, tmp_path / "pool", Loaded(1), pooled_lines.append, False, None, [ref], pool
        )
    assert "measuring 2 model(s) on 2 one-thread worker process(es) ..." in pooled_lines
    assert not any("worker process" in s for s in one)
    assert set(pooled) == set(serial) == {ref.key} | {m.key for m in models}
    for key in serial:
        assert _without_seconds(pooled[key]) == _without_seconds(serial[key]), key
    # the workers wrote each model's evidence where the next run reads it: nothing is measured again
    again: list[str] = []
    with WorkerPool(2) as pool:
        gather([ref, *models], sizes, 0, tmp_path / "pool", Loaded(1), again.append, False, None, [ref], pool)
    assert sum("evidence from the cache" in s for s in again) == 3 and not any("running" in s for s in again)
