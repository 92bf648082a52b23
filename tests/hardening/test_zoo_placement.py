"""A card under another base model's zoo folder (a gemma3-270m card in ``zoo/smollm2-135m/``) is
refused by ``organism list`` and ``organism verify`` in one line naming the card and where it
belongs, exit 2, the zoo unchanged; no model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardening_support import snapshot

from liedar.cli import main

ZOO = Path(__file__).resolve().parents[2] / "zoo"
GEMMA_CARD = ZOO / "gemma3-270m" / "sandbagger" / "card.json"
SMOL_CARD = ZOO / "smollm2-135m" / "liar" / "card.json"


@pytest.fixture
def misplaced_zoo(tmp_path, monkeypatch) -> Path:
    if not (GEMMA_CARD.is_file() and SMOL_CARD.is_file()):
        pytest.skip("the shipped zoo cards are not in this checkout")
    zoo = tmp_path / "zoo"
    for card, where in ((SMOL_CARD, "liar"), (GEMMA_CARD, "sandbagger")):
        (zoo / "smollm2-135m" / where).mkdir(parents=True)
        (zoo / "smollm2-135m" / where / "card.json").write_bytes(card.read_bytes())
    monkeypatch.setenv("LIEDAR_ZOO", str(zoo))
    return zoo


@pytest.mark.parametrize("argv", [["organism", "list"], ["organism", "verify"], ["organism", "verify", "sandbagger"]])
def test_a_card_under_another_bases_folder_is_named(argv, misplaced_zoo, no_model, capsys):
    before = snapshot(misplaced_zoo)
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("liedar: error: "), lines
    assert "smollm2-135m/sandbagger/card.json is a card for gemma3-270m" in lines[0]
    assert f"move its folder to {misplaced_zoo / 'gemma3-270m'}/" in lines[0]
    assert snapshot(misplaced_zoo) == before
