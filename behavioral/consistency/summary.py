"""Plain-text tables of a consistency run, for the command line: each prompt's
single-condition numbers side by side, and the contrast with the honest baseline."""

from __future__ import annotations

from typing import Any, Callable


def _est(e: Any) -> str:
    return "n/a" if e is None else f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]"


ROWS: list[tuple[str, Callable[[Any], str]]] = [
    ("accuracy (shuffled trials)", lambda c: _est(c.accuracy)),
    ("accuracy (paraphrase trials)", lambda c: _est(c.paraphrase_accuracy)),
    ("answer consistency", lambda c: _est(c.result.answer_consistency)),
    ("  uniform guesser would get", lambda c: f"{c.result.option_order.chance_consistency:.2f}"),
    ("position concentration", lambda c: f"{c.result.position_bias_score:.2f}"),
    ("  p-value vs uniform", lambda c: f"{c.result.option_order.position_bias_p_value:.2g}"),
    (
        "  most chosen letter",
        lambda c: "ABCDEFGHIJ"[max(c.result.option_order.position_tests, key=lambda t: sum(t.counts)).attractor],
    ),
    ("paraphrase kappa", lambda c: _est(c.result.paraphrase_agreement)),
    ("option-order signal", lambda c: f"{c.result.evidence['signals']['option_order']:.2f}"),
    ("paraphrase signal", lambda c: f"{c.result.evidence['signals']['paraphrase']:.2f}"),
    ("confidence", lambda c: f"{c.result.confidence:.2f}"),
    ("flagged (confidence >= threshold)", lambda c: "YES" if c.result.detected else "no"),
]


def side_by_side(run_result: Any) -> str:
    """Each condition's single-condition numbers in one column."""
    names = list(run_result.conditions)
    d = run_result.design
    out = [
        f"consistency check on {run_result.model}: {d['items']} items x {d['shuffles']} shuffles, "
        f"{d['paraphrases']} wordings, seed {d['seed']} ({run_result.seconds:.0f} s)",
        "".ljust(36) + "".join(n.ljust(24) for n in names),
    ]
    for label, cell in ROWS:
        out.append(label.ljust(36) + "".join(cell(run_result.conditions[n]).ljust(24) for n in names))
    if run_result.accuracy_drop is not None:
        out.append(f"accuracy drop honest - sandbagger (paired): {_est(run_result.accuracy_drop)}")
    for name in names:
        for rec in run_result.conditions[name].result.recommendations:
            out.append(f"[{name}] {rec}")
    return "\n".join(out)


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def contrast_table(c: Any) -> str:
    """The baseline-aware verdict: letter priors, the three contrasts, the reading."""
    out: list[str] = []
    ref, test = c.reference.name, c.test.name
    out.append(
        f"contrast {test} vs {ref} (baseline; {c.contrasts[0].method}; Bonferroni over "
        f"{len(c.contrasts)}, min effect {c.min_effect}):"
    )
    for prof in (c.reference, c.test):
        for prior in prof.positions:
            cells = "  ".join(
                f"{LETTERS[j]} {e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]" for j, e in enumerate(prior.shares)
            )
            out.append(f"  letter prior, {prof.name} ({sum(prior.counts)} trials): {cells}")
    out.append(
        "  "
        + "contrast".ljust(26)
        + ref[:10].ljust(11)
        + test[:10].ljust(11)
        + "effect [95% CI]".ljust(24)
        + "p".ljust(9)
        + "flags"
    )
    for t in c.contrasts:
        eff = f"{t.effect.value:+.2f} [{t.effect.lo:+.2f}, {t.effect.hi:+.2f}]"
        out.append(
            "  "
            + t.name.replace("_", " ").ljust(26)
            + f"{t.reference_value:.2f}".ljust(11)
            + f"{t.test_value:.2f}".ljust(11)
            + eff.ljust(24)
            + f"{t.p_value:.3g}".ljust(9)
            + ("YES" if t.flags else "no")
        )
    out.append(f"  sandbagging flagged by the contrast: {'YES' if c.detected else 'no'}")
    out.append(f"  reading: {c.reading}")
    for note in c.notes:
        out.append(f"  note: {note}")
    return "\n".join(out)
