"""Fine-tuning elicitation (a trained protocol) on the tiny random-weight model: it trains
a copy, never the caller's model; demonstrations never include an evaluated item; the
tuned copy answers differently from the untuned model."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("peft")


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    from liedar import models

    return models.load(str(tiny_model_dir), backend="transformers", n_threads=1)


def _items():
    from liedar.behavioral.items.mcq import load_mcq_bank

    bank = load_mcq_bank()
    return bank[:6], bank[6:40]


def test_finetune_trains_a_copy_and_scores_held_out_items(lm):
    from liedar.behavioral.runners.elicitation import cloze_continuations, cloze_prompt, finetune_elicitation

    items, pool = _items()
    probe = cloze_prompt(items[0], "You are a quiz taker.", True)
    before = np.asarray(lm.score_options(probe, cloze_continuations(items[0])))
    ft = finetune_elicitation(
        lm, items, shot_pool=pool, system="You are a quiz taker.", n_demos=8, epochs=3, lr=5e-3, seed=0
    )
    after = np.asarray(lm.score_options(probe, cloze_continuations(items[0])))
    np.testing.assert_array_equal(before, after)  # the caller's model is untouched
    assert ft.estimate.n == ft.before.n == len(items) and ft.estimate.kind == "capability"
    assert set(ft.correct) == {it.item_id for it in items}
    assert not set(ft.demo_ids) & {it.item_id for it in items}
    assert len(ft.demo_ids) == ft.n_demos == 8
    assert ft.training["loss_per_epoch"][-1] < ft.training["loss_per_epoch"][0]  # it learned the demonstrations
    assert ft.train_seconds > 0 and ft.to_dict()["protocol"] == "finetune"


def test_demonstrations_must_not_overlap_the_evaluated_items(lm):
    from liedar.behavioral.runners.elicitation import finetune_elicitation
    from liedar.core.errors import InputError

    items, pool = _items()
    with pytest.raises(InputError, match="disjoint"):
        finetune_elicitation(lm, items, shot_pool=pool + [items[0]], n_demos=4, epochs=1)
    with pytest.raises(InputError, match="demonstrations"):
        finetune_elicitation(lm, items, shot_pool=pool[:2], n_demos=4, epochs=1)


def test_behavioral_still_imports_without_torch():
    import subprocess
    import sys

    code = (
        "import sys; import liedar.behavioral.runners.elicitation as e; "
        "assert 'torch' not in sys.modules and 'peft' not in sys.modules; print(e.FINETUNE_PROTOCOL)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
