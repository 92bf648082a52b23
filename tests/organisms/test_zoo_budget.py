"""The shipped zoo stays within the repository's size budget (docs/organisms.md, "Size").

Every clone carries every adapter, so the budget is a promise to users: 240 MB for all of
``zoo/``. It holds the smollm2-135m audit zoo's three halves (every-block float16 adapters,
4.9 MB each: the blind rule did not fit on fewer blocks), the core organisms on both small
models, and the capable rung's top-block adapters (about 2.6 MB each at r = 8 on 4 blocks).
"""

from __future__ import annotations

import json
from pathlib import Path

ZOO = Path(__file__).resolve().parents[2] / "zoo"
BUDGET_BYTES = 240_000_000


def _bytes_under(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_the_zoo_fits_its_budget():
    used = _bytes_under(ZOO)
    assert used > 0, "zoo/ is empty: the shipped organisms are missing from the checkout"
    assert used <= BUDGET_BYTES, f"zoo/ holds {used:,} bytes, over its {BUDGET_BYTES:,}-byte budget"


def test_every_shipped_adapter_is_float16_sized_to_its_card():
    checked = 0
    for card_path in ZOO.rglob("card.json"):
        card = json.loads(card_path.read_text())
        adapter = card_path.parent / "adapter" / "adapter.safetensors"
        if "adapter" not in card or not adapter.exists():
            continue
        assert card["adapter"]["dtype"] == "float16", card_path
        assert adapter.stat().st_size == card["adapter"]["bytes"], card_path
        checked += 1
    assert checked >= 20, f"only {checked} shipped adapters found under zoo/"
