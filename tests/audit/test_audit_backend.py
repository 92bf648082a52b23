"""An audit read through llama.cpp: every model through the same backend, the units that
fine-tune the weights through transformers, and evidence that is never mistaken for the
transformers backend's."""

from __future__ import annotations

from pathlib import Path

import pytest

from liedar.audit.evidence import AUDIT_DTYPE, audit_sizes, audit_units, evidence_key, measure
from liedar.audit.run import Loaded, resolve_target

ROOT = Path(__file__).resolve().parents[2]
MEMBER = ROOT / "zoo" / "audit" / "smollm2-135m" / "fresh" / "fd_noised_half"


def test_the_evidence_key_names_a_backend_other_than_transformers():
    units = audit_units()
    plain = evidence_key({"fingerprint": "f"}, {}, 0, units)
    assert evidence_key({"fingerprint": "f"}, {}, 0, units, backend="transformers") == plain
    assert evidence_key({"fingerprint": "f"}, {}, 0, units, backend="llamacpp") != plain


def test_the_evidence_key_names_a_dtype_other_than_the_audits_float32():
    # committed float32 evidence keeps its key; evidence computed in any other dtype never pairs with it
    units = audit_units()
    plain = evidence_key({"fingerprint": "f"}, {}, 0, units)
    assert AUDIT_DTYPE == "float32"
    assert evidence_key({"fingerprint": "f"}, {}, 0, units, dtype=AUDIT_DTYPE) == plain
    assert evidence_key({"fingerprint": "f"}, {}, 0, units, dtype="bfloat16") != plain


def test_a_transformers_audit_has_no_second_loader():
    assert Loaded(threads=1).bare_loader(resolve_target("smollm2-135m")) is None


@pytest.mark.integration
@pytest.mark.timeout(900)
def test_an_organism_is_read_through_llamacpp_and_fine_tuned_through_transformers(monkeypatch):
    if not (MEMBER / "card.json").is_file():
        pytest.skip(f"{MEMBER} is not in this tree")
    from liedar.models import lora
    from liedar.models.hf import TransformersBackend
    from liedar.models.llamacpp import LlamaCppBackend

    trained: list[dict] = []
    real_train = lora.train_lora

    def recording_train(*args, **kwargs):
        adapter = real_train(*args, **kwargs)
        trained.append(adapter.meta)
        return adapter

    monkeypatch.setattr(lora, "train_lora", recording_train)

    target = resolve_target(str(MEMBER), label="m")
    loaded = Loaded(threads=1, backend="llamacpp")
    bare_loads: list[object] = []

    def load_bare():
        model = loaded.bare_loader(target)()
        bare_loads.append(model)
        return model

    sizes = audit_sizes(quick=True)
    sizes.update(gap_items=8, finetune_demos=2, finetune_epochs=1)
    units = [u for u in audit_units() if u.name in ("sandbagging", "ceilings")]
    asked = loaded.loader(target)()
    assert isinstance(asked, LlamaCppBackend) and asked.organism["adapter_dir"] == str(target.adapter_dir)
    ev = measure(lambda: asked, target.identity, sizes, 0, units=units, progress=False, load_bare=load_bare)
    assert ev.units == {"sandbagging": "ok", "ceilings": "ok"}
    (bare,) = bare_loads  # loaded once, for the one unit that fine-tunes
    assert isinstance(bare, TransformersBackend)
    assert bare.fingerprint == asked.fingerprint  # the same organism, through the other backend
    assert not loaded.bases  # the transformers copy is not kept for later models (6 GB at 1.5B)
    # float32 weights and float32 training on every CPU, so evidence pairs across machines
    assert bare.dtype_name == "float32"
    assert [m["dtype"] for m in trained] == ["fp32"]
    assert ev.cells["ceilings"].effect is not None and ev.cells["ceilings"].effect.n > 0
