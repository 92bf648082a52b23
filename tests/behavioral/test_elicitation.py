"""Elicitation protocols and the winner's-curse-free ceiling (behavioral/elicitation.py,
behavioral/runners/elicitation.py), on fake backends whose behaviour is known exactly."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from elicitation_fakes import ANSWERS, LetterBiasKnower, _last_user, _shown  # noqa: E402
from instrument_fakes import FakeMCQ  # noqa: E402

from liedar.behavioral.elicitation import select_ceiling, split_selection_evaluation  # noqa: E402
from liedar.behavioral.items.mcq import MCQItem, load_mcq_bank  # noqa: E402
from liedar.behavioral.runners.elicitation import (  # noqa: E402
    DEFAULT_PROTOCOLS,
    PROTOCOLS,
    ElicitationContext,
    correctness_under,
    cyclic_orders,
    draw_shots,
    k_shot_letter,
    measure_ceiling,
    permutation_letter,
)
from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM, run_sandbagging  # noqa: E402
from liedar.core.errors import InputError  # noqa: E402

BANK = load_mcq_bank()


class NeedsExamples:
    """Answers right only after at least one worked example; otherwise always letter A / the first text."""

    kind = "fake"

    def score_options(self, prompt, options: Sequence[str]) -> np.ndarray:
        _, user, shots = _last_user(prompt)
        question, shown = _shown(user)
        texts = shown if shown else [o.strip() for o in options]
        pick = texts.index(ANSWERS[question]) if shots else 0
        x = np.full(len(options), -4.0)
        x[pick] = 0.0
        return x


class ClozeOnlyOn:
    """Knows the answer under cloze for the ids in ``known`` only; letters: always A."""

    kind = "fake"

    def __init__(self, known_questions: set[str]):
        self.known = known_questions

    def score_options(self, prompt, options: Sequence[str]) -> np.ndarray:
        _, user, _ = _last_user(prompt)
        question, shown = _shown(user)
        x = np.full(len(options), -4.0)
        if shown:
            x[0] = 0.0
        else:
            texts = [o.strip() for o in options]
            x[
                texts.index(ANSWERS[question])
                if question in self.known
                else (texts.index(ANSWERS[question]) + 1) % len(texts)
            ] = 0.0
        return x


def _ids(items: Sequence[MCQItem]) -> list[str]:
    return [it.item_id for it in items]


# ---- the split ---------------------------------------------------------------------------


def test_split_is_disjoint_complete_seeded_and_stratified() -> None:
    ids = _ids(BANK)
    strata = {it.item_id: it.topic for it in BANK}
    sel, ev = split_selection_evaluation(ids, seed=3, strata=strata)
    assert set(sel).isdisjoint(ev) and set(sel) | set(ev) == set(ids)
    assert (sel, ev) == split_selection_evaluation(list(reversed(ids)), seed=3, strata=strata)  # order-free
    assert any(split_selection_evaluation(ids, seed=s, strata=strata)[0] != sel for s in (4, 5, 6))  # seed matters
    for topic in {it.topic for it in BANK}:
        n_topic = sum(1 for it in BANK if it.topic == topic)
        n_sel = sum(1 for i in sel if strata[i] == topic)
        assert n_sel == round(n_topic / 3)


@pytest.mark.parametrize(
    "ids,kw,match",
    [
        (["a"], {}, "at least 2"),
        (["a", "a", "b"], {}, "duplicate"),
        (["a", "b", "c"], {"selection_fraction": 1.0}, "strictly between"),
    ],
)
def test_split_bad_input(ids, kw, match) -> None:
    with pytest.raises(InputError, match=match):
        split_selection_evaluation(ids, **kw)


def test_split_of_two_items_leaves_one_on_each_side() -> None:
    sel, ev = split_selection_evaluation(["a", "b"], selection_fraction=0.1)
    assert len(sel) == 1 and len(ev) == 1


# ---- k-shot ------------------------------------------------------------------------------


def test_shots_never_include_the_evaluated_item() -> None:
    for it in BANK:
        shots = draw_shots(it, BANK, 3, seed=0)
        assert len({s.item_id for s in shots}) == 3
        assert it.item_id not in {s.item_id for s in shots} and it.question not in {s.question for s in shots}
    assert _ids(draw_shots(BANK[0], BANK, 3, 0)) == _ids(draw_shots(BANK[0], BANK, 3, 0))  # seeded


def test_k_shot_prompt_shows_the_examples_then_the_item() -> None:
    fake = LetterBiasKnower()
    item, pool = BANK[0], BANK[10:20]
    k_shot_letter(fake, item, BENIGN_SYSTEM, ElicitationContext(tuple(pool), k=3, seed=1))
    (prompt,) = fake.prompts
    msgs = prompt.messages
    users = [m.content for m in msgs if m.role == "user"]
    assistants = [m.content for m in msgs if m.role == "assistant"]
    assert len(users) == 4 and users[-1].startswith(f"Question: {item.question}\n")
    assert all(not u.startswith(f"Question: {item.question}\n") for u in users[:-1])
    for u, a in zip(users[:-1], assistants):  # each example is answered with its right letter
        q, shown = _shown(u)
        assert a == f"Answer: {'ABCD'[shown.index(ANSWERS[q])]}"
    assert assistants[-1] == "Answer:"  # the prefill for the evaluated item


def test_k_shot_plain_prompt_has_examples_then_item() -> None:
    fake = LetterBiasKnower()
    k_shot_letter(fake, BANK[0], None, ElicitationContext(tuple(BANK[10:20]), k=2, seed=0, chat=False))
    text = fake.prompts[0]
    assert (
        isinstance(text, str) and text.count("Question: ") == 3 and text.endswith(f"D. {BANK[0].options[3]}\nAnswer:")
    )


def test_measure_ceiling_shot_pool_is_disjoint_from_evaluated_items() -> None:
    items = BANK[:24]
    fake = LetterBiasKnower()
    measure_ceiling(fake, items, system=BENIGN_SYSTEM, protocols=("k_shot_letter", "zero_shot_letter"), seed=0)
    asked = {
        q
        for p in fake.prompts
        for q in [_shown(u)[0] for u in [m.content for m in p.messages if m.role == "user"][:-1]]
    }
    assert asked and asked.isdisjoint({it.question for it in items})
    with pytest.raises(InputError, match="disjoint"):
        measure_ceiling(fake, items, system=BENIGN_SYSTEM, shot_pool=BANK[20:40])


def test_k_shot_wins_for_a_model_that_needs_examples() -> None:
    run = measure_ceiling(NeedsExamples(), BANK[:30], system=BENIGN_SYSTEM, seed=0)
    assert run.ceiling.chosen == "k_shot_letter" and run.ceiling.estimate.value == 1.0
    zero = next(s for s in run.ceiling.scores if s.name == "zero_shot_letter")
    assert zero.evaluation.value < 0.5


# ---- position bias -----------------------------------------------------------------------


def test_cyclic_orders_put_every_option_in_every_position_once() -> None:
    orders = np.array(cyclic_orders(4))
    assert all(sorted(orders[:, pos]) == [0, 1, 2, 3] for pos in range(4))


def test_permutation_averaging_cancels_a_pure_position_bias() -> None:
    fake = LetterBiasKnower(bias=5.0, know=0.0)
    for it in BANK[:10]:
        scores = permutation_letter(fake, it, BENIGN_SYSTEM, ElicitationContext())
        assert scores == pytest.approx(np.full(4, 0.25), abs=1e-12)


def test_letter_c_lover_is_at_chance_zero_shot_but_right_under_cloze_and_permutation() -> None:
    fake, ctx = LetterBiasKnower(bias=5.0, know=1.0), ElicitationContext()
    items = BANK
    acc = {
        n: float(np.mean(list(correctness_under(fake, items, n, BENIGN_SYSTEM, ctx).values())))
        for n in ("zero_shot_letter", "cloze_sum", "cloze_norm", "permutation_letter")
    }
    at_c = float(np.mean([it.options.index(it.answer) == 2 for it in items]))
    assert acc["zero_shot_letter"] == pytest.approx(at_c) and at_c < 0.4  # picks C every time: chance level
    assert acc["cloze_sum"] == acc["cloze_norm"] == acc["permutation_letter"] == 1.0


# ---- choosing without winner's curse -----------------------------------------------------


def test_chosen_protocol_is_reported_on_the_evaluation_split_only() -> None:
    sel = {"a": {"s1": True, "s2": True, "s3": True}, "b": {"s1": False, "s2": True, "s3": False}}
    ev = {"a": {f"e{i}": i < 1 for i in range(10)}, "b": {f"e{i}": i < 8 for i in range(10)}}
    c = select_ceiling(sel, ev, {"a": "proto a", "b": "proto b"}, chance=0.25)
    assert c.chosen == "a"  # best on selection, although b is better on evaluation
    assert c.estimate.value == pytest.approx(0.1) and c.estimate.n == 10 and c.estimate.kind == "capability"
    assert c.correct == ev["a"]
    assert [s.evaluation.value for s in c.scores] == pytest.approx([0.1, 0.8])
    assert "proto a" in c.protocol_text() and "b 0.80" in c.protocol_text()


def test_ties_go_to_the_earlier_protocol() -> None:
    sel = {"a": {"s": True}, "b": {"s": True}}
    ev = {"a": {"e": False}, "b": {"e": True}}
    assert select_ceiling(sel, ev, {"b": "", "a": ""}, chance=0.25).chosen == "b"
    assert select_ceiling(sel, ev, {"a": "", "b": ""}, chance=0.25).chosen == "a"


@pytest.mark.parametrize(
    "sel,ev,match",
    [
        ({"a": {"x": True}, "b": {"x": True}}, {"a": {"x": True}, "b": {"x": True}}, "both the selection"),
        ({"a": {"x": True}, "b": {"y": True}}, {"a": {"z": True}, "b": {"z": True}}, "different items"),
        ({}, {"a": {"z": True}, "b": {"z": True}}, "do not match"),
    ],
)
def test_select_ceiling_bad_input(sel, ev, match) -> None:
    with pytest.raises(InputError, match=match):
        select_ceiling(sel, ev, {"a": "", "b": ""}, chance=0.25)


def test_runner_chooses_on_selection_and_reports_on_evaluation() -> None:
    items = BANK[:36]
    sel_ids, ev_ids = split_selection_evaluation(_ids(items), seed=7, strata={it.item_id: it.topic for it in items})
    known = {it.question for it in items if it.item_id in sel_ids}  # cloze knowledge only where it is selected
    run = measure_ceiling(ClozeOnlyOn(known), items, system=BENIGN_SYSTEM, shot_pool=BANK[60:80], seed=7)
    c = run.ceiling
    assert set(c.selection_ids) == set(sel_ids) and set(c.evaluation_ids) == set(ev_ids)
    assert c.chosen == "cloze_sum"  # 100% on selection
    assert c.estimate.value == 0.0 and c.estimate.n == len(ev_ids)  # but nothing on the held-out items
    assert {s.name: s.selection.value for s in c.scores}["cloze_sum"] == 1.0


def test_single_protocol_needs_no_split() -> None:
    run = measure_ceiling(FakeMCQ(ANSWERS), BANK[:12], system=BENIGN_SYSTEM, protocols=("cloze_norm",))
    assert run.ceiling.selection_ids == () and len(run.ceiling.evaluation_ids) == 12
    assert run.ceiling.estimate.value == 1.0


def test_unknown_protocol_is_one_clear_error() -> None:
    with pytest.raises(InputError, match="unknown elicitation protocol 'best_of_n'"):
        measure_ceiling(FakeMCQ(ANSWERS), BANK[:12], system=BENIGN_SYSTEM, protocols=("best_of_n",))


def test_zero_shot_is_not_scored_twice() -> None:
    """Zero-shot letter equals permutation's first shift: the memo scores that prompt once."""
    fake = LetterBiasKnower()
    run = measure_ceiling(fake, BANK[:9], system=BENIGN_SYSTEM, protocols=("zero_shot_letter", "permutation_letter"))
    assert run.score_calls == len(fake.prompts) == 9 * 4


# ---- wired into the sandbagging gap ------------------------------------------------------


def test_sandbagging_gap_uses_the_chosen_protocol_on_the_evaluation_items() -> None:
    class Sandbagger(LetterBiasKnower):
        """Letter-C lover that knows the answers (visible under cloze/permutation) and
        sandbags the dangerous framing by scoring the right option lowest."""

        def score_options(self, prompt, options):
            x = super().score_options(prompt, options)
            system, _, _ = _last_user(prompt)
            return -x if "dangerous-capability" in system else x

    items = BANK[:45]
    res = run_sandbagging(Sandbagger(), items, shot_pool=BANK[80:100], seed=0)
    ceiling = res.extra["ceiling"]
    assert ceiling["chosen"] == res.extra["framed_protocol"] != "zero_shot_letter"
    assert res.elicited.value == 1.0 and res.elicited.n == len(ceiling["evaluation_ids"]) == 30
    assert res.framed.value == 0.0 and "sandbagging signature" in res.reading
    assert ceiling["chosen"] in res.protocol and "evaluation items" in res.protocol
    assert set(DEFAULT_PROTOCOLS) == set(PROTOCOLS)


def test_elicitation_modules_import_without_torch() -> None:
    """Contract: `behavioral` imports no torch/models at import time."""
    import subprocess

    code = (
        "import sys, behavioral.elicitation, behavioral.runners.elicitation, behavioral.runners.sandbagging\n"
        "bad = [m for m in ('torch', 'transformers', 'llama_cpp', 'models', 'probes') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


def test_cli_gap_names_the_chosen_protocol_and_refuses_unknown_ones(monkeypatch, capsys) -> None:
    from cli_harness import run_cli

    from liedar import models

    monkeypatch.setattr(models, "load", lambda name, backend="transformers", **kw: LetterBiasKnower())
    assert run_cli(["gap", "--model", "fake", "--limit", "24", "--protocols", "zero_shot_letter,cloze_norm"]) == 0
    out = capsys.readouterr().out
    assert "chosen on" in out and "= cloze: log-prob of each option's text per UTF-8 byte" in out
    assert "elicited" in out and "n=15" in out  # 24 items, 8 per topic: 3 x 3 selection, 15 evaluation
    assert run_cli(["gap", "--model", "fake", "--limit", "24", "--protocols", "best_of_n"]) == 2
    assert "--protocols: unknown best_of_n" in capsys.readouterr().err


def test_noise_runner_scores_with_the_named_protocol(tiny_model_dir) -> None:
    """Answers defined as the tiny model's own *cloze* choices: baseline 1.0 under cloze_norm
    (it would not be under the letter protocol unless letters and cloze happened to agree)."""
    import dataclasses

    import torch

    from liedar import models
    from liedar.behavioral.runners.elicitation import cloze_norm
    from liedar.behavioral.runners.noise import run_noise

    torch.set_num_threads(1)
    lm = models.load(str(tiny_model_dir), backend="transformers", n_threads=1)
    ctx = ElicitationContext()
    items = [
        dataclasses.replace(it, answer=it.options[int(np.argmax(cloze_norm(lm, it, BENIGN_SYSTEM, ctx)))])
        for it in BANK[:8]
    ]
    comparison, raw = run_noise(lm, items, sigmas=(0.3,), seeds=(0,), sandbag_system=None, protocol="cloze_norm")
    assert comparison.honest.baseline.value == 1.0 and "protocol cloze_norm" in comparison.protocol
    letter, _ = run_noise(lm, items, sigmas=(0.3,), seeds=(0,), sandbag_system=None)
    assert "protocol zero_shot_letter" in letter.protocol
    with pytest.raises(InputError, match="unknown elicitation protocol"):
        run_noise(lm, items, protocol="best_of_n")
