"""A server whose answers break the OpenAI API is named in one line, exit 2, whatever the menu
study's mode reads from the answer: the exact mode's top log-probs, the sampled mode's K
choices, the deterministic mode's choice. `liedar.models.served.check_answer` is the one
check; each case breaks one field of the fake server's otherwise valid answer, runs the real
CLI, and checks the line names the field and that nothing broken was cached. Also the
served options' bounds (``--timeout``, ``--rate-limit``, ``--served-cache``), refused before
any request. Each test is bounded (60 s) and sends at most a few requests."""

from __future__ import annotations

import copy

import pytest

from liedar.cli import main

pytestmark = pytest.mark.timeout(60)

ONE_CONFIG = ["--scenarios", "support_triage", "--tiers", "clear", "--framings", "minimal", "--quiet"]


def _tops(change):
    """An edit of the chat answer's first top list."""

    def edit(body, answer):
        for c in answer["choices"]:
            if c.get("logprobs"):
                first = c["logprobs"]["content"][0]
                first["top_logprobs"] = change(first["top_logprobs"])

    return edit


def _completions_shape(body, answer):
    for c in answer["choices"]:
        if c.get("logprobs"):
            c["logprobs"] = {"tokens": ["A"], "token_logprobs": [-0.1], "top_logprobs": [[{"A": -0.1}]]}


def _choices(change):
    def edit(body, answer):
        answer["choices"] = change(answer["choices"])

    return edit


# (id, mode, edit of the answer, what the one line must name)
CASES = [
    ("logprob-strings", "exact", _tops(lambda t: [{**e, "logprob": str(e["logprob"])} for e in t]), "].logprob is '"),
    ("logprob-null", "exact", _tops(lambda t: [{**e, "logprob": None} for e in t]), "].logprob is None"),
    ("logprob-positive", "exact", _tops(lambda t: [{**e, "logprob": 0.5} for e in t]), "<= 0"),
    ("no-token", "exact", _tops(lambda t: [{"logprob": e["logprob"]} for e in t]), "].token is missing"),
    ("token-five-times", "exact", _tops(lambda t: [copy.deepcopy(t[0]) for _ in range(5)]), "is listed twice"),
    ("top-a-list", "exact", _completions_shape, "logprobs.top_logprobs[0] is a list"),
    (
        "top-200000-entries",
        "exact",
        _tops(lambda t: [{"token": f"t{i}", "logprob": -1.0} for i in range(200_000)]),
        "holds 200000 entries, more than the 20 asked",
    ),
    ("index-first", "stochastic", _choices(lambda cs: [{**c, "index": "first"} for c in cs]), "choices[0].index"),
    ("choices-strings", "stochastic", _choices(lambda cs: ["A" for _ in cs]), "choices[0] is a str"),
    ("choices-too-many", "stochastic", _choices(lambda cs: cs + [{**cs[0], "index": 99}]), "more than the n=4"),
    ("choices-strings-det", "deterministic", _choices(lambda cs: ["A" for _ in cs]), "choices[0] is a str"),
]


@pytest.mark.parametrize(("mode", "edit", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_broken_answer_is_one_line_naming_its_field(fake_server, tmp_path, capsys, mode, edit, names):
    fake_server.edit = edit
    cache = tmp_path / "cache"
    argv = ["behavioral", "menus", "--model", "openai:fake-model", "--base-url", fake_server.base_url]
    argv += ["--served-cache", str(cache), "--max-retries", "0", "--mode", mode, *ONE_CONFIG]
    if mode == "stochastic":
        argv += ["--samples", "4", "--bootstrap", "19"]
    code = main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("liedar: error: ") and "broke the OpenAI API" in lines[0] and names in lines[0], err
    assert not list((cache / "responses").rglob("*.json"))  # a broken answer is never cached


@pytest.mark.parametrize(
    ("flag", "names"),
    [
        (["--timeout", "1e300"], "--timeout must lie in (0, 86400]"),
        (["--rate-limit", "1e-300"], "give at least 0.000278 (one request an hour)"),
        (["--concurrency", "1000000000"], "--concurrency must lie in 1..1024"),
        (["--max-retries", "1000000000"], "--max-retries must lie in 0..100"),
        (["--served-cache", "afile"], "afile is a file, not a folder"),
        (["--served-cache", "afile/sub"], "afile is a file, not a folder"),
    ],
    ids=[
        "timeout-1e300",
        "rate-limit-1e-300",
        "concurrency-1e9",
        "max-retries-1e9",
        "cache-a-file",
        "cache-under-a-file",
    ],
)
def test_a_served_option_beyond_its_bound_is_refused_before_any_request(
    fake_server, tmp_path, capsys, monkeypatch, flag, names
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_bytes(b"kept\n")
    argv = ["behavioral", "menus", "--model", "openai:fake-model", "--base-url", fake_server.base_url, *flag]
    code = main([*argv, *ONE_CONFIG])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("liedar: error: ") and names in lines[0], lines
    assert fake_server.requests == 0 and (tmp_path / "afile").read_bytes() == b"kept\n"
