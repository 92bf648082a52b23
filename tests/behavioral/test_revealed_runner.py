"""The menu-study runner and CLI on fake backends (no model), plus one real-model run."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from liedar.behavioral.items.menus import FRAMINGS, PAIRS, SCENARIOS, TIERS, TRIPLES, VIGNETTES, render_question
from liedar.behavioral.runners.menus import parse_reply, run_menu_study
from liedar.core.errors import InputError


def _letters_and_labels(prompt):
    user = prompt.messages[-1].content
    lines = [ln for ln in user.splitlines() if len(ln) > 2 and ln[1] == ")"]
    return [ln[0] for ln in lines], [ln[3:].split(":")[0] for ln in lines]


class RankingBackend:
    """Always scores the option letters so that a fixed preference order wins."""

    name = "fake-ranking"

    def __init__(self, prefer_index: int = 2):
        self.prefer_index = prefer_index

    def score_options(self, prompt, options):
        _, labels = _letters_and_labels(prompt)
        scenario = next(s for s in SCENARIOS.values() if labels[0] in s.actions)
        dist = [abs(scenario.actions.index(a) - self.prefer_index) for a in labels]
        # ties broken by the action's place in the task, not by its letter: a fixed ranking
        return -np.array(dist, dtype=float) - 0.01 * np.array([scenario.actions.index(a) for a in labels])


class CompromiseBackend:
    """Picks the last option of pairs but the middle option of triples (compromise effect)."""

    name = "fake-compromise"

    def score_options(self, prompt, options):
        target = len(options) - 1 if len(options) == 2 else 1
        return np.array([0.0 if i == target else -5.0 for i in range(len(options))])


@dataclass
class _Gen:
    text: str


class SamplingBackend:
    """Replies in several styles; in triples it sometimes names an action not offered."""

    name = "fake-sampler"

    def generate(self, prompt, max_tokens=64, temperature=0.0, seed=0, **_):
        rng = np.random.default_rng(seed + 7919 * len(prompt.messages[-1].content))
        letters, labels = _letters_and_labels(prompt)
        r = rng.random()
        if len(letters) == 3 and r < 0.1:
            return _Gen("I would escalate to VP immediately.")  # off-menu in most triples
        if r < 0.2:
            return _Gen("hmm, not sure")
        k = int(rng.integers(len(letters)))
        return _Gen(f"Answer: {letters[k]}" if r < 0.6 else f"{letters[k]}) {labels[k]}")


def test_bank_shape_matches_the_study_design():
    assert len(SCENARIOS) == 5 and all(len(s.actions) == 5 for s in SCENARIOS.values())
    assert len(FRAMINGS) == 5 and len(PAIRS) == 10 and len(TRIPLES) == 5
    covered = {p for t in TRIPLES for p in [(t[0], t[1]), (t[0], t[2]), (t[1], t[2])]}
    assert covered == set(PAIRS)  # every pair sits inside some triple
    for s in SCENARIOS.values():
        assert {v.tier for v in VIGNETTES if v.scenario == s.key} == set(TIERS)
    q = render_question(VIGNETTES[0], FRAMINGS["minimal"], SCENARIOS["support_triage"].menus()[10])
    assert "A) auto-reply" in q and "C) billing" in q and "D)" not in q


def test_parse_reply_maps_letters_labels_and_off_menu_actions():
    s = SCENARIOS["support_triage"]
    menu = ("auto-reply", "bug ticket")
    assert parse_reply("Answer: B", menu, s) == "bug ticket"
    assert parse_reply("A) auto-reply", menu, s) == "auto-reply"
    assert parse_reply("Let me think... Answer: C", menu, s) is None  # a letter beyond the menu
    assert parse_reply("We should escalate to VP.", menu, s) == "escalate to VP"  # off the menu: kept
    assert parse_reply("no idea", menu, s) is None


def test_a_consistent_fake_model_passes_everything_deterministically():
    res = run_menu_study(
        RankingBackend(), scenarios=["procurement"], framings=["minimal", "aggressive"], progress=False
    )
    assert len(res.configs) == 2 * 8
    assert res.sarp_pass().value == 1.0 and res.sarp_pass().n == 16
    assert all(c.houtman_maks.n_drop == 0 for c in res.configs)
    assert sum(res.iia_reversals_by_scenario().values()) == 0
    assert res.rum_pass() is None  # no RUM test in deterministic mode
    json.dumps(res.to_dict())


def test_a_compromise_effect_fake_model_fails_sarp_and_shows_reversals():
    res = run_menu_study(
        CompromiseBackend(), scenarios=["job_screening"], tiers=["clear"], progress=False, order="canonical"
    )
    assert res.sarp_pass().value == 0.0
    assert res.iia_reversals_by_scenario()["job_screening"] > 0
    table = res.sarp_by_scenario_tier()
    assert table["job_screening"]["clear"].n == 2 * 5
    assert all(c.houtman_maks.n_drop >= 1 and c.houtman_maks.exact for c in res.configs)


def test_stochastic_mode_counts_parse_fails_and_runs_the_rum_test():
    res = run_menu_study(
        SamplingBackend(),
        mode="stochastic",
        samples=6,
        scenarios=["support_triage"],
        tiers=["clear"],
        framings=["minimal"],
        rum_bootstrap=19,
        progress=False,
    )
    assert len(res.configs) == 2
    assert sum(res.parse_fails_by_scenario().values()) > 0
    c = res.configs[0]
    named = [k for f in c.log["parse_fails"] for k in f]
    assert "escalate to VP" in named and "PARSE_FAIL" in named
    assert res.rum_pass() is not None and res.mixed_menu_share().n > 0
    d = res.to_dict()
    assert d["rum_pass"]["method"] == "wilson" and d["mode"] == "stochastic"
    json.dumps(d)


def test_bad_runner_arguments_raise_input_error():
    with pytest.raises(InputError, match="mode"):
        run_menu_study(RankingBackend(), mode="greedy", progress=False)
    with pytest.raises(InputError, match="scenario"):
        run_menu_study(RankingBackend(), scenarios=["payroll"], progress=False)
    with pytest.raises(InputError, match="temperature"):
        run_menu_study(SamplingBackend(), mode="stochastic", temperature=0.0, progress=False)


def test_cli_prints_tables_and_writes_json(tmp_path, monkeypatch, capsys):
    """Through the real command line; the loaded model is a scripted compromise-effect fake."""
    from cli_harness import run_cli

    from liedar import models

    monkeypatch.setattr(models, "load", lambda name, backend="transformers", **kw: CompromiseBackend())
    out = tmp_path / "menus.json"
    argv = ["menus", "--model", "fake", "--scenarios", "alert_routing", "--tiers", "binary", "--order", "canonical"]
    assert run_cli([*argv, "--quiet", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "SARP pass rate by scenario × prompt framing" in text and "alert_routing" in text
    assert json.loads(out.read_text())["result"]["n_configurations"] == 10
    assert run_cli([*argv, "--samples", "5"]) == 2  # a stochastic-only flag in deterministic mode
    assert "--samples only apply to --mode stochastic" in capsys.readouterr().err


@pytest.mark.integration
def test_real_smollm2_makes_choices_on_one_configuration():
    import torch

    torch.set_num_threads(1)
    from liedar import models

    try:
        backend = models.load("smollm2-135m", n_threads=1)
    except Exception as exc:  # the model package is optional
        pytest.skip(f"smollm2-135m unavailable: {exc}")
    res = run_menu_study(backend, scenarios=["procurement"], tiers=["clear"], framings=["minimal"], progress=False)
    assert len(res.configs) == 2
    for c in res.configs:
        assert len(c.logprobs) == 15 and all(np.isfinite(lp).all() for lp in c.logprobs)
        assert c.houtman_maks.exact


class FirstLetterBackend:
    """Always answers "A", whatever the options: a letter preference, not a ranking."""

    name = "fake-first-letter"

    def score_options(self, prompt, options):
        return np.array([0.0] + [-5.0] * (len(options) - 1))


def test_shuffled_order_exposes_a_letter_preference_that_canonical_order_hides():
    kw = dict(scenarios=["procurement"], tiers=["clear"], framings=["minimal"], progress=False)
    canonical = run_menu_study(FirstLetterBackend(), order="canonical", **kw)
    shuffled = run_menu_study(FirstLetterBackend(), order="shuffled", **kw)
    assert canonical.sarp_pass().value == 1.0  # "always A" over mild -> drastic lists looks rational
    assert shuffled.sarp_pass().value < 1.0  # over shuffled letters it is what it is: inconsistent
    assert all(c.presented is not None and len(c.presented) == 15 for c in shuffled.configs)
    # every reversal of a model that answers "A" is the lettering's: each one fits "letter position"
    from liedar.behavioral.runners.menus import mechanism_counts

    mechanisms = [mechanism_counts(c.log, c.scenario, c.presented) for c in shuffled.configs]
    assert sum(c.iia_reversals for c in shuffled.configs) > 0
    assert all(m["letter position"] == c.iia_reversals for m, c in zip(mechanisms, shuffled.configs))
    from liedar.behavioral.menus_summary import study_tables

    assert "IIA reversals by pattern" in study_tables(shuffled)
    with pytest.raises(InputError, match="option order"):
        run_menu_study(FirstLetterBackend(), order="random", **kw)


def test_exact_mode_on_a_tiny_model_matches_the_deterministic_choice_and_the_law(tiny_model_dir):
    """One forward pass per menu gives both: its argmax is the deterministic mode's choice,
    and the law equals the tempered softmax of the letters' log-probabilities."""
    from liedar import models
    from liedar.behavioral.revealed import rum_exact_law

    lm = models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024)
    kw = {"scenarios": ["procurement"], "tiers": ["clear"], "framings": ["minimal"], "progress": False}
    det = run_menu_study(lm, mode="deterministic", **kw)
    ex = run_menu_study(lm, mode="exact", temperature=0.7, **kw)
    assert len(ex.configs) == len(det.configs) == 2
    for d, e in zip(det.configs, ex.configs):
        assert e.log == d.log and e.sarp.consistent == d.sarp.consistent
        for a, b in zip(e.logprobs, d.logprobs):
            np.testing.assert_allclose(a, b, atol=1e-4)
        for lp, law in zip(e.logprobs, e.law):
            z = np.array(lp) / 0.7
            np.testing.assert_allclose(law, np.exp(z - z.max()) / np.exp(z - z.max()).sum(), rtol=1e-6)
        assert e.rum_law.l1_gap == pytest.approx(rum_exact_law(e.presented, e.law).l1_gap)
        assert all(0 < m <= 1 for m in e.law_mass)
    assert ex.rum_law_pass().n == 2 and ex.to_dict()["rum_law_pass"] is not None
    from liedar.behavioral.menus_summary import study_tables

    assert "RUM pass rate on the exact choice law at T=0.7" in study_tables(ex)
    # a random tiny model puts almost no first-token probability on the letters: the SARP row says
    # its choices were not read, and a study whose letters carry the mass does not
    from liedar.behavioral.runners.menus import LETTERS_UNREAD_MASS, letters_unread
    from liedar.behavioral.runners.menus_instrument import MenuStudy

    mean_mass = float(np.mean([m for c in ex.configs for m in c.law_mass]))
    unread = letters_unread(ex.configs)
    assert (unread is not None) == (mean_mass < LETTERS_UNREAD_MASS)
    if unread is not None:
        assert unread.text in ex.notes
        run = type("Run", (), {"result": ex})()
        sarp = next(m for m in MenuStudy().section(run).measures if m.id == "sarp_pass")
        assert [w.code for w in sarp.warnings] == ["letters_unread"]
    import dataclasses

    read = [dataclasses.replace(c, law_mass=[0.6] * len(c.law_mass)) for c in ex.configs]
    faint = [dataclasses.replace(c, law_mass=[1e-5] * len(c.law_mass)) for c in ex.configs]
    assert letters_unread(read) is None
    assert letters_unread(faint).code == "letters_unread" and "1e-05" in letters_unread(faint).text


def test_stochastic_mode_on_a_local_model_reads_each_prompt_once_with_the_loops_law(tiny_model_dir):
    """The shared-prefix path gives the per-sample loop's parsed counts exactly."""
    from liedar import models
    from liedar.behavioral.runners import menus as runner

    lm = models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024)
    vignette = next(v for v in VIGNETTES if v.scenario == "procurement")
    presented = SCENARIOS["procurement"].menus()
    shared = runner._choose_stochastic(lm, vignette, FRAMINGS["minimal"], presented, 6, 1.3, 11)

    class Loop:  # the same model seen as a plain generate() backend
        name = "loop"

        def generate(self, *a, **k):
            return lm.generate(*a, **k)

    loop = runner._choose_stochastic(Loop(), vignette, FRAMINGS["minimal"], presented, 6, 1.3, 11)
    assert shared.to_dict() == loop.to_dict()


def test_cli_refuses_bad_exact_and_sampled_arguments_before_loading(monkeypatch, capsys):
    from cli_harness import run_cli

    from liedar import models

    def no_load(*a, **k):
        raise AssertionError("the model must not load on bad input")

    monkeypatch.setattr(models, "load", no_load)
    cases = [
        (["--mode", "exact", "--temperature", "0"], "temperature > 0"),
        (["--mode", "exact", "--samples", "20"], "--samples only apply to --mode stochastic"),
        (["--mode", "stochastic", "--samples", "1"], "samples >= 2"),
        (["--scenarios", "payroll"], "unknown scenario"),
        (["--framings", "socratic"], "unknown framing"),
        (["--workers", "2", "--base-url", "http://127.0.0.1:9/v1"], "a served model (--base-url) is one endpoint"),
        (["--workers", "0"], "--workers"),
    ]
    for extra, message in cases:
        assert run_cli(["menus", "--model", "fake", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_each_menu_samples_with_its_own_seeds():
    """Menus of one configuration must not share their K seeds (common random numbers would
    make their sampled choices move together, against the RUM test's independence)."""
    from liedar.behavioral.runners.menus import menu_seed

    for base in (0, 1000, 7):
        starts = sorted(menu_seed(base, j) for j in range(15))
        assert starts[0] >= 0 and all(b - a >= 20 for a, b in zip(starts, starts[1:]))
    assert menu_seed(5, 0) == 5


def _parts_script():
    """``scripts/menus_study_parts.py`` loaded as a module (scripts are not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "menus_study_parts.py"
    spec = importlib.util.spec_from_file_location("menus_study_parts", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)  # type: ignore[union-attr]
    return script


def test_the_study_tables_are_read_from_saved_parts(tmp_path):
    """`scripts/menus_study_parts.py --tables` combines the saved scenario parts: SARP counts
    per scenario × framing, IIA sums, and the exact law's RUM and letter-A share."""
    import json

    script = _parts_script()

    def config(scenario, framing, consistent, iia):
        return {
            "scenario": scenario, "framing": framing, "tier": "clear", "sarp": {"consistent": consistent},
            "iia_reversals": iia, "houtman_maks": {"n_drop": 0 if consistent else 2}, "n_parse_fail": 0,
            "rum_law": {"consistent": consistent, "l1_gap": 0.0 if consistent else 1.0},
            "law": [[0.75, 0.25], [0.25, 0.75]], "law_mass": [0.5, 0.7],
        }  # fmt: skip

    for scenario, rows in (("alpha", [True, False]), ("beta", [False, False])):
        part = {"seconds": 10.0, "load_before": 1.0, "load_after": 2.0,
                "result": {"mode": "exact", "temperature": 0.7,
                           "configs": [config(scenario, "minimal", ok, 3) for ok in rows]}}  # fmt: skip
        (tmp_path / f"{scenario}.json").write_text(json.dumps(part))
    tables = script.parts_tables(sorted(tmp_path.glob("*.json")))
    assert "| alpha | 0.50 [0.09, 0.91] (1/2) | 0.50 [0.09, 0.91] (1/2) |" in tables
    assert "| beta | 0.00 [0.00, 0.66] (0/2) |" in tables
    assert "IIA reversals by scenario: alpha 6, beta 6" in tables
    assert "RUM on the exact law: 0.25" in tables
    assert "lettered A (letters shuffled per menu): mean 0.50" in tables


def test_the_sampled_study_tables_count_rum_mixed_menus_and_unparsed_replies(tmp_path):
    """In stochastic mode the parts' tables add RUM on the K samples (bootstrap and exact),
    the mixed-menu share pooled over menus, and the share of replies that failed to parse."""
    import json

    script = _parts_script()

    def config(framing, reject, mixed, fails):
        return {
            "scenario": "alpha", "framing": framing, "tier": "clear", "sarp": {"consistent": False},
            "iia_reversals": 1, "houtman_maks": {"n_drop": 1}, "n_parse_fail": fails,
            "rum": {"reject": reject, "exact": {"consistent": False}, "samples_per_menu": [20 - fails] + [20] * 14},
            "mixed_menus": {"successes": mixed, "n": 15},
        }  # fmt: skip

    configs = [config("minimal", False, 3, 0), config("minimal", True, 6, 0), config("aggressive", True, 15, 10)]
    part = {"seconds": 1.0, "load_before": 0.0, "load_after": 0.0,
            "result": {"mode": "stochastic", "temperature": 0.7, "configs": configs}}  # fmt: skip
    (tmp_path / "alpha.json").write_text(json.dumps(part))
    tables = script.parts_tables([tmp_path / "alpha.json"])
    assert "RUM on the K samples (bootstrap test): 0.33" in tables and "(1/3)" in tables
    assert "minimal 0.50 [0.09, 0.91] (1/2), aggressive 0.00" in tables
    assert "Mixed menus (the K samples not unanimous): 0.533" in tables  # 24 of 45 menus
    assert "Replies that failed to parse, by framing: minimal 0.000, aggressive 0.033" in tables  # 10 of 300


def test_a_part_of_the_study_letters_each_configuration_as_the_whole_study_does():
    """A configuration's lettering is keyed on its place in the whole design, not in the run:
    a study saved one scenario at a time equals the whole study, and no two scenarios share
    a lettering (an "always A" model then reverses different menus in each)."""
    kw = dict(framings=["minimal", "aggressive"], tiers=["clear"], progress=False)
    whole = run_menu_study(FirstLetterBackend(), scenarios=["support_triage", "procurement"], **kw)
    part = run_menu_study(FirstLetterBackend(), scenarios=["procurement"], **kw)
    in_whole = {(c.vignette_id, c.framing): c.presented for c in whole.configs}
    assert all(c.presented == in_whole[(c.vignette_id, c.framing)] for c in part.configs)
    by_scenario = {
        s: [c.presented for c in whole.configs if c.scenario == s] for s in ("support_triage", "procurement")
    }
    positions = {s: [[sorted(m).index(m[0]) for m in p] for p in rows] for s, rows in by_scenario.items()}
    assert positions["support_triage"] != positions["procurement"]


def test_each_iia_pattern_is_recognised_and_a_reversal_that_fits_none_is_other():
    """Actions a < b < c < d by severity; the pair (b, c) is won by b."""
    from liedar.behavioral.revealed import IIAReversal, iia_mechanisms

    severity = ["a", "b", "c", "d"]
    first = {frozenset("bc"): "c"}  # the pair's loser was shown first: no letter reading for the pair

    def patterns(larger, choice, first_shown=first):
        return iia_mechanisms(IIAReversal(("b", "c"), "b", larger, choice, 1.0, (0.0, 1.0)), severity, first_shown)

    assert patterns(("b", "c", "d"), "c") == ["compromise"]  # c is the middle of b, c, d
    assert patterns(("a", "b", "c"), "c") == ["severity anchor"]  # a milder option added, the choice got harsher
    assert patterns(("b", "c", "d", "a"), "c") == ["other"]  # added on both sides, not the middle of three
    shown_first = {frozenset("bc"): "b", frozenset("bcd"): "c"}
    assert patterns(("b", "c", "d"), "c", shown_first) == ["letter position", "compromise"]
    reversed_pair = IIAReversal(("b", "c"), "c", ("b", "c", "d"), "b", 1.0, (0.0, 1.0))
    assert iia_mechanisms(reversed_pair, severity, {}) == ["severity anchor"]  # harsher d added, choice got milder


def test_saved_parts_read_the_reversal_patterns_from_the_choices_they_kept(tmp_path):
    """A study saved in parts (its configurations with their choices and letterings) prints the
    IIA patterns; for a model that answers "A", the letter position is every reversal's."""
    import json

    shuffled = run_menu_study(FirstLetterBackend(), scenarios=["procurement"], tiers=["clear"],
                              framings=["minimal"], progress=False)  # fmt: skip
    part = {"seconds": 1.0, "load_before": 0.0, "load_after": 0.0, "result": shuffled.to_dict()}
    (tmp_path / "procurement.json").write_text(json.dumps(part))
    tables = _parts_script().parts_tables([tmp_path / "procurement.json"])
    total = sum(c.iia_reversals for c in shuffled.configs)
    assert total > 0
    assert f"  procurement: {total} / " in tables  # letter position: every reversal
    assert "IIA reversals by pattern (a reversal can fit several): letter position, compromise" in tables


def test_a_saved_choice_log_reads_back_to_the_same_log():
    """`choice_log_from_dict` inverts both logs' ``to_dict``, parse-fails included."""
    from liedar.behavioral.revealed import MenuChoiceLog, StochasticChoiceLog, choice_log_from_dict

    actions = ["a", "b", "c"]
    menus = [["a", "b"], ["b", "c"], ["a", "b", "c"]]
    one = MenuChoiceLog(menus, ["a", None, "c"], actions=actions)
    many = StochasticChoiceLog.from_counts(menus, [{"a": 3, "b": 1}, {"c": 2, None: 2}, {"b": 4}], actions=actions)
    for log in (one, many):
        back = choice_log_from_dict(json.loads(json.dumps(log.to_dict())), actions)
        assert type(back) is type(log) and back.to_dict() == log.to_dict()


def test_the_parts_script_refuses_bad_arguments_in_one_line(capsys, monkeypatch):
    """`menus_study_parts.py`: K < 2 or a temperature of 0 with the whole study, or an unknown
    scenario or framing, is one line and exit 2, before any model loads."""
    import sys

    script = _parts_script()
    for bad, says in (
        (["--mode", "whole", "--samples", "1"], "samples >= 2"),
        (["--mode", "whole", "--temperature", "0"], "temperature > 0"),
        (["--mode", "exact", "--framings", "nope"], "unknown framing"),
        (["--mode", "stochastic", "--scenarios", "nope"], "unknown scenario"),
    ):
        monkeypatch.setattr(sys, "argv", ["menus_study_parts.py", *bad, "--out", "unused"])
        assert script.main() == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
