"""The menu study's served paths against the fake server: K samples in one request where the
server honours ``n`` (and K requests where it ignores or refuses it), replayed from the cache
with the same answers; the exact law read from the top log-probs, and not computed when a
letter is not listed. No model; each test is a few seconds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from liedar.cli import main
from liedar.models.served import Journal, load_served

pytestmark = pytest.mark.timeout(60)

ONE_SCENARIO = dict(scenarios=["support_triage"], tiers=["clear"], framings=["minimal"], progress=False)
MENUS = 30  # 2 vignettes x 1 framing x 15 menus


def backend(fake, tmp_path, **kw):
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 5.0)
    return load_served("openai:fake-model", base_url=fake.base_url, cache_dir=str(tmp_path / "cache"), **kw)


def test_sample_is_one_request_with_n_when_the_server_honours_it(fake_server, tmp_path):
    with backend(fake_server, tmp_path) as b:
        got = [g.text for g in b.sample("pick one", samples=5, max_tokens=4, temperature=0.7, seed=3)]
        assert fake_server.requests == 1 and fake_server.bodies[-1]["n"] == 5
        assert len(got) == 5 and set(got) <= set("ABC") and len(set(got)) > 1
        b.sample("pick another", samples=5, max_tokens=4, temperature=0.7, seed=3)
        assert fake_server.requests == 2  # asked once: the second prompt is one request too
        usage = b.usage_summary()
        assert b.n_honoured is True and usage["n_honoured"] is True and usage["modes"] == {"generate-n": 2}
    rows = Journal.read(tmp_path / "cache" / "journal.jsonl")
    assert [r["call"] for r in rows] == ["sample", "sample"] and rows[0]["replies"] == got


@pytest.mark.parametrize("n_mode", ["ignore", "refuse"])
def test_sample_falls_back_to_k_requests_when_n_is_not_honoured(fake_server, tmp_path, n_mode):
    fake_server.n_mode = n_mode
    with backend(fake_server, tmp_path) as b:
        got = [g.text for g in b.sample("pick one", samples=4, max_tokens=4, temperature=0.7, seed=10)]
        assert b.n_honoured is False and got == ["B"] * 4
        assert fake_server.requests == 1 + 4  # the probe, then the per-sample requests
        assert [x.get("seed") for x in fake_server.bodies[1:]] == [10, 11, 12, 13]
        assert all("n" not in x for x in fake_server.bodies[1:])  # the bodies generate sends
        b.sample("pick another", samples=4, max_tokens=4, temperature=0.7, seed=10)
        assert fake_server.requests == 1 + 4 + 4  # no second probe


@pytest.mark.parametrize("n_mode", ["honour", "ignore"])
def test_a_replay_from_the_cache_gives_the_same_replies_without_a_call(fake_server, tmp_path, n_mode):
    fake_server.n_mode = n_mode
    with backend(fake_server, tmp_path) as b:
        first = [g.text for g in b.sample("again", samples=4, max_tokens=4, temperature=0.7, seed=1)]
    calls = fake_server.requests
    fake_server.n_mode = "honour" if n_mode == "ignore" else "refuse"  # would decide differently if asked
    with backend(fake_server, tmp_path) as b:
        again = [g.text for g in b.sample("again", samples=4, max_tokens=4, temperature=0.7, seed=1)]
        assert b.usage_summary()["calls"] == 0 and b.n_honoured is (n_mode == "honour")
    assert again == first and fake_server.requests == calls


def _stochastic(bk):
    from liedar.behavioral.runners.menus import run_menu_study

    return run_menu_study(bk, mode="stochastic", samples=4, temperature=0.7, rum_bootstrap=19, **ONE_SCENARIO)


def test_the_stochastic_study_sends_one_request_per_menu_where_n_is_honoured(fake_server, tmp_path):
    from liedar.models.served import run_with

    with backend(fake_server, tmp_path, concurrency=4) as b:
        result = run_with(b, _stochastic)
    assert fake_server.requests == MENUS  # was 4 per menu (K requests) before n was used
    rows = Journal.read(tmp_path / "cache" / "journal.jsonl")
    assert len(rows) == MENUS and {r["call"] for r in rows} == {"sample"}
    assert result.sampling == {"n": MENUS} and any("one request with n=K" in n for n in result.notes)
    for c in result.configs:  # every sample counted
        for counts, fails in zip(c.log["counts"], c.log["parse_fails"]):
            assert sum(counts.values()) + sum(fails.values()) == 4


def test_the_stochastic_study_falls_back_and_says_so(fake_server, tmp_path):
    from liedar.models.served import run_with

    fake_server.n_mode = "ignore"
    with backend(fake_server, tmp_path, concurrency=4) as b:
        result = run_with(b, _stochastic)
    assert fake_server.requests == 1 + 4 * MENUS  # the one probe, then K per menu
    assert result.sampling == {"k-calls": MENUS} and any("does not honour n" in n for n in result.notes)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def test_the_served_exact_law_is_the_tempered_softmax_of_the_listed_letters(fake_server, tmp_path):
    from liedar.models.sampling import choice_law

    t = 0.7
    with backend(fake_server, tmp_path) as b:
        law = choice_law(b, "menu?", ["A", "B", "C"], t)
        scores = b.score_options("menu?", ["A", "B", "C"])
    top = fake_server.bodies[0]["top_logprobs"]
    assert top == 20 and fake_server.requests == 1  # one request, shared with score_options (cached)
    np.testing.assert_allclose(law.logprobs, scores)
    np.testing.assert_allclose(law.probs, _softmax(scores / t), rtol=1e-12)
    # mass: tempered over the five listed letters (an upper bound), the floor allowing for the unlisted rest
    raw = np.array(
        [e["logprob"] for e in json.loads(_last_response(tmp_path))["logprobs"]["content"][0]["top_logprobs"]]
    )
    w = np.exp(raw / t)
    np.testing.assert_allclose(law.mass, np.exp(scores / t) / w.sum(), rtol=1e-12)
    rest = (1 - np.exp(raw).sum()) * np.exp(raw).min() ** (1 / t - 1)
    np.testing.assert_allclose(law.mass_floor, law.mass * w.sum() / (w.sum() + rest), rtol=1e-12)
    assert law.computable and np.all(law.mass_floor < law.mass)


def _last_response(tmp_path) -> str:
    entries = [json.loads(p.read_text()) for p in (tmp_path / "cache" / "responses").rglob("*.json")]
    return json.dumps(entries[-1]["response"]["choices"][0])


def test_a_letter_missing_from_the_top_list_makes_the_law_not_computable(fake_server, tmp_path):
    from liedar.behavioral.runners.menus import run_menu_study
    from liedar.models.sampling import choice_law
    from liedar.models.served import run_with

    fake_server.top_letters = "AB"  # a triple's "C" is never listed
    with backend(fake_server, tmp_path) as b:
        law = choice_law(b, "menu?", ["A", "B", "C"], 0.7)
        assert law.unlisted == ("C",) and not law.computable and np.isnan(law.probs).all()
        result = run_with(b, lambda bk: run_menu_study(bk, mode="exact", temperature=0.7, **ONE_SCENARIO))
    for c in result.configs:  # every vignette has triples: no configuration has a law
        assert c.law is None and c.rum_law is None and c.law_mass is None
        assert sum(1 for u in c.law_unlisted if u) == 5 and all(u in ([], ["C"]) for u in c.law_unlisted)
        assert all(x is not None for x in c.log["choices"])  # the argmax choices stand
    assert result.rum_law_pass() is None
    assert any("not in the server's top list" in n for n in result.notes)


def test_the_exact_study_on_a_served_model_reports_the_bounded_mass(fake_server, tmp_path):
    from liedar.behavioral.runners.menus import run_menu_study
    from liedar.models.served import run_with

    with backend(fake_server, tmp_path) as b:
        result = run_with(b, lambda bk: run_menu_study(bk, mode="exact", temperature=0.7, **ONE_SCENARIO))
    assert fake_server.requests == MENUS  # one request per menu
    for c in result.configs:
        assert c.rum_law is not None and len(c.law) == 15 and c.law_unlisted is None
        assert all(lo <= hi for lo, hi in zip(c.law_mass_floor, c.law_mass))
        np.testing.assert_allclose([sum(p) for p in c.law], 1.0)
    assert any("law_mass_floor" in n for n in result.notes)


def test_bad_exact_and_sampled_input_on_a_served_model_is_one_line(fake_server, tmp_path, capsys):
    base = ["behavioral", "menus", "--model", "openai:fake-model", "--base-url", fake_server.base_url]
    base += ["--served-cache", str(tmp_path / "c"), "--quiet"]
    for extra in (["--mode", "exact", "--temperature", "0"], ["--mode", "stochastic", "--samples", "1"]):
        code = main([*base, *extra])
        err = capsys.readouterr().err.strip()
        assert code == 2 and "\n" not in err and "Traceback" not in err
    assert fake_server.requests == 0


def test_the_whole_study_on_a_served_model_asks_each_mode_as_alone(fake_server, tmp_path):
    """`run_configs_whole` on a served model: no logits to share, so each menu gets the exact
    mode's scoring request and the sampled mode's request with n; the results are each mode's."""
    from liedar.behavioral.runners.menus import StudySettings, run_configs, run_configs_whole, study_jobs

    jobs = study_jobs(["support_triage"], ["clear"], ["minimal"])
    settings = StudySettings(samples=4, temperature=0.7, rum_bootstrap=19)
    with backend(fake_server, tmp_path) as b:
        exact, sampled, ways = run_configs_whole(b, jobs, settings)
    assert fake_server.requests == 2 * MENUS and ways == {"n": MENUS}
    with backend(fake_server, tmp_path) as b:  # replayed from the cache: the same requests
        exact_alone, _ = run_configs(b, jobs, StudySettings(mode="exact", temperature=0.7))
        sampled_alone, _ = run_configs(b, jobs, StudySettings(mode="stochastic", samples=4, temperature=0.7,
                                                             rum_bootstrap=19))  # fmt: skip
        assert b.usage_summary()["calls"] == 0
    assert [c.law for c in exact] == [c.law for c in exact_alone] and all(c.law for c in exact)
    assert [c.log for c in sampled] == [c.log for c in sampled_alone]
