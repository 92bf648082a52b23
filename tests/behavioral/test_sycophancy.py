from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from instrument_fakes import FakeYesNo, sycophant  # noqa: E402

from liedar.behavioral.items.sycophancy import sycophancy_items  # noqa: E402
from liedar.behavioral.runners.sycophancy import run_sycophancy  # noqa: E402
from liedar.behavioral.sycophancy import SycophancyRecord, sycophancy  # noqa: E402
from liedar.core.errors import InputError  # noqa: E402


def _records(flip_when_wrong: int, flip_when_right: int, n: int = 40) -> list[SycophancyRecord]:
    recs = []
    for i in range(n):
        truth = "yes" if i % 2 else "no"
        other = "no" if truth == "yes" else "yes"
        recs.append(SycophancyRecord(f"{i}-wrong", truth, truth, other, other if i < flip_when_wrong else truth))
        recs.append(SycophancyRecord(f"{i}-right", truth, truth, truth, other if i < flip_when_right else truth))
    return recs


def test_known_capitulation_and_instability():
    r = sycophancy(_records(20, 2))
    assert r.capitulation.value == pytest.approx(0.5) and r.capitulation.n == 40
    assert r.instability.value == pytest.approx(0.05)
    assert r.excess.value == pytest.approx(0.45) and r.excess.lo > 0
    assert r.n_user_wrong == r.n_user_right == 40
    assert "sycophantic" in r.reading
    assert r.capitulation.kind == "propensity" and r.neutral_accuracy.kind == "capability"


def test_unstable_but_not_sycophantic():
    r = sycophancy(_records(8, 8))
    assert r.capitulation.value == r.instability.value
    assert "no capitulation beyond prompt instability" in r.reading


def test_appropriate_updating_is_not_capitulation():
    # Neutral answers wrong; a right user corrects them: counted as appropriate updates.
    recs = [SycophancyRecord(f"{i}-r", "yes", "no", "yes", "yes") for i in range(10)]
    recs += [SycophancyRecord(f"{i}-w", "yes", "yes", "no", "yes") for i in range(10)]
    r = sycophancy(recs)
    assert r.appropriate_update.value == 1.0 and r.capitulation.value == 0.0


@pytest.mark.parametrize(
    "recs,match",
    [
        ([], "no sycophancy records"),
        (
            [SycophancyRecord("a", "yes", "maybe", "no", "no"), SycophancyRecord("b", "yes", "yes", "yes", "yes")],
            "neutral='maybe' is not an allowed value",
        ),
        ([SycophancyRecord("a", "yes", "yes", "yes", "yes")], "no records where the user is wrong"),
        ([SycophancyRecord("a", "yes", "yes", "no", "no")] * 2, "duplicate"),
    ],
)
def test_bad_input(recs, match):
    with pytest.raises(InputError, match=match):
        sycophancy(recs)


def test_bank_is_balanced():
    items = sycophancy_items()
    assert sum(i.suggestion == i.claim.truth for i in items) * 2 == len(items)
    assert sum(i.claim.truth == "yes" for i in items) * 2 == len(items)


def test_runner_separates_a_sycophant_from_an_honest_model():
    honest, _ = run_sycophancy(FakeYesNo())
    assert honest.neutral_accuracy.value == 1.0 and honest.capitulation.value == 0.0
    syc, records = run_sycophancy(FakeYesNo(sycophant))
    assert syc.capitulation.value == 1.0 and syc.instability.value == 0.0
    assert "sycophantic" in syc.reading and len(records) == len(sycophancy_items())
