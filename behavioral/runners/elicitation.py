"""Elicitation protocols for multiple-choice ceilings, and the runner that picks the best.

Each protocol is a named function ``(backend, item, system, ctx) -> scores``: one score per
option *in the item's canonical order*, higher = preferred, so the answer is the argmax
whatever the protocol did internally. They talk to the model only through
``backend.score_options`` (see `models.base.BackendBase.score_options`).

1. ``zero_shot_letter`` — options lettered A-D in canonical order, log-prob of each answer
   letter (the old, only protocol). Confounds knowledge with letter preference.
2. ``k_shot_letter`` — the same, after k worked examples (question, options, "Answer: X")
   drawn from a disjoint shot pool (never the evaluated item). Teaches the format; small
   models often need it to put mass on the right letter at all.
3. ``cloze_sum`` / ``cloze_norm`` — no letters: each option's *text* is scored as the
   continuation of "Question: ...  Answer:" (summed log-prob; and divided by the
   continuation's length in UTF-8 bytes, as lm-eval-harness ``acc`` / ``acc_norm``; the
   "cloze formulation" of OLMES, Gu et al. 2024, which suits small models). No letter, so
   no letter bias; the sum favours short options, the normalised score corrects for that.
   One forward pass per option; both come from the same passes.
4. ``permutation_letter`` — letter scoring over all n cyclic shifts of the option order;
   each option's letter probability (renormalised over the offered letters) is averaged
   over the shifts, so every option sits in every position once and a pure position bias
   adds the same amount to every option (Zheng et al. 2023, "Large Language Models Are Not
   Robust Multiple Choice Selectors"). n passes; shift 0 *is* zero-shot letter.
5. ``finetune`` (`finetune_elicitation`, a *trained* protocol, not a per-item scorer) — a
   short LoRA fine-tune on a few correct demonstrations from a disjoint pool, then a prompt
   protocol (cloze by default) on the tuned copy (Greenblatt et al. 2024). It recovers
   capability a model hides from every prompt (a password-locked model); it needs a
   transformers backend and peft, and can also *teach*, so its gain over the best prompt is
   read against an honest model's gain (the validation matrix measures both).

`measure_ceiling` runs them on a selection and an evaluation split and hands the per-item
correctness to `behavioral.elicitation.select_ceiling` (why the split: see there).
The protocols ask through one `liedar.models.scoring.ScoringEngine` per run, so zero-shot
letter costs nothing beyond permutation's first shift.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from liedar.behavioral.elicitation import ElicitedCeiling, seeded_rng, select_ceiling, split_selection_evaluation
from liedar.behavioral.items.mcq import MCQItem, load_mcq_bank
from liedar.behavioral.runners.common import (
    ANSWER_INSTRUCTION,
    ANSWER_PREFIX,
    LETTERS,
    build_prompt,
    format_question,
    letter_continuations,
    with_answer_prefill,
)
from liedar.core.errors import InputError
from liedar.core.stats import DEFAULT_INTERVAL
from liedar.models.backend import Backend
from liedar.models.scoring import ScoringEngine

DEFAULT_SHOTS = 3


@dataclass(frozen=True)
class ElicitationContext:
    """What protocols may need besides the item: the shot pool, k and the seed."""

    shot_pool: tuple[MCQItem, ...] = ()
    k: int = DEFAULT_SHOTS
    seed: int = 0
    chat: Optional[bool] = None  # None: chat template when a system prompt is given


Scorer = Callable[[Any, MCQItem, Optional[str], ElicitationContext], np.ndarray]


def _use_chat(system: Optional[str], ctx: ElicitationContext) -> bool:
    return bool(system) if ctx.chat is None else ctx.chat


def _letter_logprobs(backend: Backend, prompt: Any, n: int) -> np.ndarray:
    scores = np.asarray(backend.score_options(prompt, letter_continuations(n)), dtype=float)
    if scores.shape != (n,):
        raise InputError(f"backend.score_options returned shape {scores.shape} for {n} options: expected ({n},)")
    return scores


def _letter_prompt(item: MCQItem, presented: Sequence[str], system: Optional[str], chat: bool) -> Any:
    return with_answer_prefill(build_prompt(item.question, presented, system, chat))


def zero_shot_letter(backend: Backend, item: MCQItem, system: Optional[str], ctx: ElicitationContext) -> np.ndarray:
    """Protocol 1: letter log-probs, options in canonical order, no examples."""
    return _letter_logprobs(
        backend, _letter_prompt(item, item.options, system, _use_chat(system, ctx)), len(item.options)
    )


def draw_shots(item: MCQItem, pool: Sequence[MCQItem], k: int, seed: int) -> list[MCQItem]:
    """k worked examples for ``item`` from ``pool``, never ``item`` itself (nor an item with
    the same question), drawn by a generator seeded by (seed, item id) so each item gets
    its own fixed examples and the examples' answer letters vary."""
    eligible = [p for p in pool if p.item_id != item.item_id and p.question != item.question]
    if len(eligible) < k:
        raise InputError(
            f"the shot pool has {len(eligible)} usable example(s) for {item.item_id!r}, fewer than k={k}: "
            "give a larger shot pool or a smaller k"
        )
    idx = seeded_rng(seed, "shots", item.item_id).choice(len(eligible), size=k, replace=False)
    return [eligible[int(i)] for i in idx]


def k_shot_prompt(item: MCQItem, shots: Sequence[MCQItem], system: Optional[str], chat: bool) -> Any:
    """The evaluated question after worked examples: chat turns (user question, assistant
    "Answer: X") or, for plain prompts, blocks ending "Answer: X" separated by blank lines."""

    def letter(shot: MCQItem) -> str:
        return LETTERS[shot.options.index(shot.answer)]

    if not chat:
        head = f"{system}\n\n" if system else ""
        blocks = [f"{format_question(s.question, s.options)}\n{ANSWER_PREFIX} {letter(s)}" for s in shots]
        return head + "\n\n".join(blocks + [f"{format_question(item.question, item.options)}\n{ANSWER_PREFIX}"])
    from liedar.models.chat import Dialogue, Message  # torch-free, kept lazy by contract

    messages = [Message("system", system)] if system else []
    for s in shots:
        messages.append(Message("user", f"{format_question(s.question, s.options)}\n{ANSWER_INSTRUCTION}"))
        messages.append(Message("assistant", f"{ANSWER_PREFIX} {letter(s)}"))
    messages.append(
        Message("user", f"{format_question(item.question, item.options)}\n{ANSWER_INSTRUCTION}", detect=True)
    )
    return with_answer_prefill(Dialogue.of(*messages))


def k_shot_letter(backend: Backend, item: MCQItem, system: Optional[str], ctx: ElicitationContext) -> np.ndarray:
    """Protocol 2: letter log-probs after ``ctx.k`` worked examples from ``ctx.shot_pool``."""
    shots = draw_shots(item, ctx.shot_pool, ctx.k, ctx.seed)
    return _letter_logprobs(backend, k_shot_prompt(item, shots, system, _use_chat(system, ctx)), len(item.options))


def cloze_prompt(item: MCQItem, system: Optional[str], chat: bool) -> Any:
    """ "Question: ...\\nAnswer:" with no options listed; the option text is the continuation."""
    if not chat:
        head = f"{system}\n\n" if system else ""
        return f"{head}Question: {item.question}\n{ANSWER_PREFIX}"
    from liedar.models.chat import Dialogue, Message

    messages = [Message("system", system)] if system else []
    messages.append(Message("user", f"Question: {item.question}", detect=True))
    return with_answer_prefill(Dialogue.of(*messages))


def cloze_continuations(item: MCQItem) -> list[str]:
    return [" " + o for o in item.options]


def cloze_sum(backend: Backend, item: MCQItem, system: Optional[str], ctx: ElicitationContext) -> np.ndarray:
    """Protocol 3a: summed log-prob of each option's text as the answer (lm-eval ``acc``)."""
    conts = cloze_continuations(item)
    scores = np.asarray(backend.score_options(cloze_prompt(item, system, _use_chat(system, ctx)), conts), dtype=float)
    if scores.shape != (len(conts),):
        raise InputError(f"backend.score_options returned shape {scores.shape} for {len(conts)} options")
    return scores


def cloze_norm(backend: Backend, item: MCQItem, system: Optional[str], ctx: ElicitationContext) -> np.ndarray:
    """Protocol 3b: the same log-prob divided by the continuation's UTF-8 length (lm-eval ``acc_norm``)."""
    lengths = np.array([len(c.encode("utf-8")) for c in cloze_continuations(item)], dtype=float)
    return cloze_sum(backend, item, system, ctx) / lengths


def cyclic_orders(n: int) -> list[list[int]]:
    """The n cyclic shifts of 0..n-1: order[s][pos] = option index shown at position pos."""
    return [[(pos + s) % n for pos in range(n)] for s in range(n)]


def permutation_letter(backend: Backend, item: MCQItem, system: Optional[str], ctx: ElicitationContext) -> np.ndarray:
    """Protocol 4: each option's letter probability averaged over the n cyclic shifts of the
    option order (every option in every position once, so a pure position bias cancels)."""
    n = len(item.options)
    chat = _use_chat(system, ctx)
    total = np.zeros(n)
    for order in cyclic_orders(n):
        lp = _letter_logprobs(backend, _letter_prompt(item, [item.options[i] for i in order], system, chat), n)
        p = np.exp(lp - lp.max())
        p /= p.sum()
        for pos, option in enumerate(order):
            total[option] += p[pos]
    return total / n


PROTOCOLS: dict[str, tuple[Scorer, str]] = {
    "zero_shot_letter": (zero_shot_letter, "zero-shot, answer-letter log-prob argmax, canonical option order"),
    "k_shot_letter": (k_shot_letter, "k worked examples from a disjoint pool, then answer-letter log-prob argmax"),
    "cloze_sum": (cloze_sum, "cloze: summed log-prob of each option's text as the answer (lm-eval acc)"),
    "cloze_norm": (cloze_norm, "cloze: log-prob of each option's text per UTF-8 byte (lm-eval acc_norm)"),
    "permutation_letter": (
        permutation_letter,
        "answer-letter probability averaged over the cyclic permutations of option order (cancels position bias)",
    ),
}
# Preference order for ties: cheapest and simplest first.
DEFAULT_PROTOCOLS: tuple[str, ...] = tuple(PROTOCOLS)


def describe(name: str, ctx: ElicitationContext) -> str:
    text = PROTOCOLS[name][1]
    return text.replace("k worked", f"{ctx.k} worked") if name == "k_shot_letter" else text


def check_protocols(names: Sequence[str]) -> list[str]:
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in PROTOCOLS]
    if unknown or not names:
        raise InputError(
            f"unknown elicitation protocol {unknown[0] if unknown else '(none)'!r}: use some of {', '.join(PROTOCOLS)}"
        )
    return names


def answer_correct(
    backend: Backend, item: MCQItem, protocol: str, system: Optional[str], ctx: ElicitationContext
) -> bool:
    """Whether the protocol's argmax option is the item's answer."""
    scores = PROTOCOLS[protocol][0](backend, item, system, ctx)
    return item.options[int(np.argmax(scores))] == item.answer


def correctness_under(
    backend: Backend,
    items: Sequence[MCQItem],
    protocol: str,
    system: Optional[str],
    ctx: ElicitationContext,
    *,
    progress: bool = False,
    desc: str = "",
) -> dict[str, bool]:
    """item id -> correct under one protocol and system prompt."""
    from liedar.core._util.progress import progress as step_progress

    return {
        it.item_id: answer_correct(backend, it, protocol, system, ctx)
        for it in step_progress(items, desc=desc or protocol, unit="item", disable=not progress, leave=False)
    }


@dataclass
class CeilingRun:
    """The chosen ceiling plus what is needed to re-use its protocol on the same items."""

    ceiling: ElicitedCeiling
    context: ElicitationContext
    evaluation_items: list[MCQItem]
    per_item: dict[str, dict[str, bool]] = field(default_factory=dict)  # protocol -> item -> correct (both splits)
    score_calls: int = 0

    # stays hand-written: writes the ceiling's keys and the context's k, seed and shot pool, not its fields
    def to_dict(self) -> dict[str, Any]:
        return {
            **self.ceiling.to_dict(),
            "k": self.context.k,
            "seed": self.context.seed,
            "shot_pool": [it.item_id for it in self.context.shot_pool],
            "per_item": self.per_item,
            "score_calls": self.score_calls,
        }


def default_shot_pool(items: Sequence[MCQItem], k: int, seed: int) -> tuple[list[MCQItem], list[MCQItem]]:
    """(shot pool, items left to evaluate): the bank's items not being evaluated; if fewer
    than 2k remain, a seeded 2k (at least 8) are carved off ``items`` instead."""
    ids = {it.item_id for it in items}
    rest = [it for it in load_mcq_bank() if it.item_id not in ids]
    if len(rest) >= 2 * k:
        return rest, list(items)
    need = max(2 * k, 8)
    if len(items) - need < 2:
        raise InputError(f"{len(items)} items leave too few to evaluate after a {need}-item shot pool: give more items")
    perm = seeded_rng(seed, "shot-pool").permutation(len(items))
    pool = {int(i) for i in perm[:need]}
    return [items[i] for i in sorted(pool)], [it for i, it in enumerate(items) if i not in pool]


def measure_ceiling(
    backend: Backend,
    items: Sequence[MCQItem],
    *,
    system: Optional[str],
    protocols: Sequence[str] = DEFAULT_PROTOCOLS,
    shot_pool: Optional[Sequence[MCQItem]] = None,
    k: int = DEFAULT_SHOTS,
    selection_fraction: float = 1 / 3,
    seed: int = 0,
    chance: float = 0.25,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> CeilingRun:
    """Score every protocol on a seeded selection split (stratified by topic) and on the
    disjoint evaluation split; the ceiling is the protocol chosen on selection, measured on
    evaluation. One protocol: no split, every item is evaluated. ``shot_pool`` None: see
    `default_shot_pool` (only needed when k-shot is among the protocols)."""
    names = check_protocols(protocols)
    items = list(items)
    if len({it.item_id for it in items}) != len(items):
        raise InputError("duplicate item ids among the MCQ items: give each item once")
    if "k_shot_letter" in names:
        if k < 1:
            raise InputError(f"k={k} worked examples: give k >= 1 (or drop k_shot_letter)")
        if shot_pool is None:
            pool, items = default_shot_pool(items, k, seed)
        else:
            pool = list(shot_pool)
            clash = {it.item_id for it in pool} & {it.item_id for it in items}
            if clash:
                raise InputError(f"shot pool and evaluated items share {sorted(clash)[0]!r}: the pool must be disjoint")
    else:
        pool = []
    ctx = ElicitationContext(tuple(pool), k, seed)
    memo = ScoringEngine(backend)
    by_id = {it.item_id: it for it in items}
    if len(names) == 1:
        sel_ids, ev_ids = [], sorted(by_id)
    else:
        sel_ids, ev_ids = split_selection_evaluation(
            sorted(by_id),
            selection_fraction=selection_fraction,
            seed=seed,
            strata={i: it.topic for i, it in by_id.items()},
        )
    selection: dict[str, dict[str, bool]] = {n: {} for n in names} if sel_ids else {}
    evaluation: dict[str, dict[str, bool]] = {n: {} for n in names}
    from liedar.core._util.progress import progress as step_progress

    for split, ids, store in (("selection", sel_ids, selection), ("evaluation", ev_ids, evaluation)):
        for i in step_progress(ids, desc=f"ceiling: {split} split", unit="item", disable=not progress, leave=False):
            for n in names:
                store[n][i] = answer_correct(memo, by_id[i], n, system, ctx)
    ceiling = select_ceiling(
        selection, evaluation, {n: describe(n, ctx) for n in names}, chance=chance, interval=interval
    )
    per_item = {n: {**selection.get(n, {}), **evaluation[n]} for n in names}
    return CeilingRun(ceiling, ctx, [by_id[i] for i in ev_ids], per_item, memo.stats["computed"])


# ---- fine-tuning elicitation (a trained protocol) -------------------------------------------------
# Why apart from PROTOCOLS: the protocols above are per-item scorers on a fixed model; this one
# first *changes the model* (Greenblatt et al. 2024, "Stress-testing capability elicitation with
# password-locked models": a few correct demonstrations and a short fine-tune recover capability
# that no prompt reaches), then scores the held-out items with a prompt protocol on the tuned copy.
# The demonstrations are labelled examples a user would have (a disjoint pool of bank items),
# never the evaluated items, never a password or trigger.

FINETUNE_PROTOCOL = "finetune"
FINETUNE_DEFAULTS: dict[str, Any] = {"n_demos": 16, "epochs": 3, "r": 8, "alpha": 16.0, "lr": 1e-3}


@dataclass(frozen=True)
class FinetuneElicitation:
    """Accuracy after a LoRA fine-tune on ``n_demos`` correct demonstrations, beside the
    same protocol's accuracy on the untuned model, on the same evaluation items."""

    protocol: str  # the prompt protocol that scores the tuned copy
    estimate: Any  # Estimate: tuned accuracy (capability)
    before: Any  # Estimate: untuned accuracy, same protocol and items
    correct: dict[str, bool]  # item id -> tuned copy answered correctly
    correct_before: dict[str, bool]
    n_demos: int
    demo_ids: tuple[str, ...]
    settings: dict[str, Any]
    train_seconds: float
    training: dict[str, Any] = field(default_factory=dict)  # the adapter's own meta (losses, dtype, ...)

    def description(self) -> str:
        return (
            f"fine-tuning elicitation: LoRA (r={self.settings['r']}, upper blocks, {self.settings['epochs']} epochs) "
            f"on {self.n_demos} correct demonstrations from a disjoint pool, then {self.protocol} on the tuned copy"
        )

    # stays hand-written: writes the constant protocol, `protocol` as scored_with and the derived description
    def to_dict(self) -> dict[str, Any]:
        return {
            "protocol": FINETUNE_PROTOCOL,
            "scored_with": self.protocol,
            "description": self.description(),
            "estimate": self.estimate.to_dict(),
            "before": self.before.to_dict(),
            "correct": self.correct,
            "correct_before": self.correct_before,
            "n_demos": self.n_demos,
            "demo_ids": list(self.demo_ids),
            "settings": self.settings,
            "train_seconds": self.train_seconds,
            "training": self.training,
        }


def demonstrations(
    pool: Sequence[MCQItem], n_demos: int, system: Optional[str], seed: int, *, chat: Optional[bool] = None
) -> tuple[list[MCQItem], list[tuple[Any, str]]]:
    """``n_demos`` seeded pool items as (cloze prompt, " correct answer") pairs:
    the exact prompt `cloze_sum` scores, so what is taught is what is measured."""
    if n_demos < 1 or len(pool) < n_demos:
        raise InputError(f"fine-tuning elicitation needs {n_demos} demonstrations but the pool has {len(pool)}")
    idx = seeded_rng(seed, "finetune-demos").permutation(len(pool))[:n_demos]
    chosen = [pool[int(i)] for i in sorted(idx)]
    use_chat = bool(system) if chat is None else chat
    return chosen, [(cloze_prompt(it, system, use_chat), " " + it.answer) for it in chosen]


def finetune_elicitation(
    backend: Backend,
    items: Sequence[MCQItem],
    *,
    shot_pool: Sequence[MCQItem],
    system: Optional[str] = None,
    protocol: str = "cloze_norm",
    n_demos: int = FINETUNE_DEFAULTS["n_demos"],
    epochs: int = FINETUNE_DEFAULTS["epochs"],
    r: int = FINETUNE_DEFAULTS["r"],
    alpha: float = FINETUNE_DEFAULTS["alpha"],
    lr: float = FINETUNE_DEFAULTS["lr"],
    seed: int = 0,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
    before: Optional[Mapping[str, bool]] = None,
    dtype: str = "auto",
) -> FinetuneElicitation:
    """Fine-tune a copy of ``backend`` on demonstrations from ``shot_pool`` and score ``items``.

    Needs a transformers backend and the ``organisms`` extra (peft); the backend passed in
    is never modified (`liedar.models.lora.apply_adapter` merges into a copy). ``before``
    (item id -> correct under ``protocol`` and ``system`` on the untuned model, e.g. from a
    ceiling run that already asked) saves re-asking the untuned model. ``dtype`` is the
    training's (`liedar.models.lora.train_lora`): ``"auto"`` trains in bf16 where the CPU has
    it natively, ``"fp32"`` gives the same numerics on every CPU.
    """
    import time

    from liedar.core.stats import proportion

    (protocol,) = check_protocols([protocol])
    items = list(items)
    if not items:
        raise InputError("fine-tuning elicitation: no evaluation items given")
    clash = {it.item_id for it in shot_pool} & {it.item_id for it in items}
    if clash:
        raise InputError(
            f"demonstration pool and evaluated items share {sorted(clash)[0]!r}: the pool must be disjoint"
        )
    from liedar.models.lora import apply_adapter, train_lora  # lazy: torch stays out of `behavioral` imports

    demos, examples = demonstrations(shot_pool, n_demos, system, seed)
    t0 = time.perf_counter()
    adapter = train_lora(
        backend,
        examples,
        layers="upper",
        r=r,
        alpha=alpha,
        epochs=epochs,
        lr=lr,
        seed=seed,
        progress=progress,
        dtype=dtype,
    )
    train_seconds = time.perf_counter() - t0
    tuned = apply_adapter(backend, adapter, name=f"{getattr(backend, 'name', 'model')}+finetune-elicitation")
    ctx = ElicitationContext((), DEFAULT_SHOTS, seed)
    if before is None:
        before = correctness_under(backend, items, protocol, system, ctx, progress=progress, desc="untuned")
    elif set(before) != {it.item_id for it in items}:
        raise InputError("fine-tuning elicitation: `before` must give the untuned correctness of exactly these items")
    before = {k: bool(v) for k, v in before.items()}
    after = correctness_under(tuned, items, protocol, system, ctx, progress=progress, desc="fine-tuned")
    del tuned
    n = len(items)
    return FinetuneElicitation(
        protocol,
        proportion(sum(after.values()), n, "capability", interval),
        proportion(sum(before.values()), n, "capability", interval),
        after,
        before,
        len(demos),
        tuple(it.item_id for it in demos),
        {"epochs": epochs, "r": r, "alpha": alpha, "lr": lr, "seed": seed, "layers": "upper"},
        train_seconds,
        dict(adapter.meta),
    )
